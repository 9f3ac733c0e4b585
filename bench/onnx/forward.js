//===- forward.js - time an ONNX model's forward on ONNX Runtime's CPU EP -===//
//
// node forward.js MODEL.onnx DIR REPEAT THREADS
// Reads DIR/src.npy and DIR/tgt.npy (int32 ids), feeds them as int64 `src`
// and `tgt` to MODEL.onnx on the CPU execution provider (intra-op threads =
// THREADS, inter-op 1, sequential, all graph optimisations), runs it once to
// warm up and REPEAT times timed, writes the first run's output as
// DIR/ort_logits.npy and prints `ort_forward_ms MEDIAN MIN`.
//
//===----------------------------------------------------------------------===//
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// A little-endian .npy of int32 or float32 (version 1 header, C order).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLength = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLength);
  const descr = /'descr': *'([^']+)'/.exec(header)[1];
  const shape = /'shape': *\(([^)]*)\)/.exec(header)[1]
                    .split(',').filter((s) => s.trim()).map(Number);
  const body = buf.subarray(10 + headerLength);
  const copy = new Uint8Array(body).buffer;
  if (descr === '<i4') return {shape, data: new Int32Array(copy)};
  if (descr === '<f4') return {shape, data: new Float32Array(copy)};
  throw new Error(file + ': dtype ' + descr + ' is not <i4 or <f4');
}

function writeNpyFloat32(file, shape, data) {
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
               shape.join(', ') + (shape.length === 1 ? ',' : '') + '), }';
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([
    prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function int64Tensor(npy) {
  return new ort.Tensor('int64', BigInt64Array.from(npy.data, (v) => BigInt(v)),
                        npy.shape);
}

async function main() {
  const [modelPath, dir, repeatText, threadsText] = process.argv.slice(2);
  if (!modelPath || !dir) {
    console.error('usage: node forward.js MODEL.onnx DIR [REPEAT] [THREADS]');
    process.exit(2);
  }
  const repeat = Number(repeatText || 10);
  const threads = Number(threadsText || 2);
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {
    src: int64Tensor(readNpy(path.join(dir, 'src.npy'))),
    tgt: int64Tensor(readNpy(path.join(dir, 'tgt.npy'))),
  };
  let result = await session.run(feeds); // warm-up
  const logits = result.logits;
  writeNpyFloat32(path.join(dir, 'ort_logits.npy'), logits.dims, logits.data);
  const times = [];
  for (let i = 0; i < repeat; ++i) {
    const start = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log('ort_forward_ms ' + times[Math.floor(times.length / 2)].toFixed(2) +
              ' ' + times[0].toFixed(2));
}

main().catch((e) => {
  console.error('error: ' + e.message);
  process.exit(1);
});
