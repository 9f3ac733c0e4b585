# How often each pair of a batch-probe checkpoint was trained on: the probe
# (probe.tx: zero tables, Adam with beta1 = beta2 = 0, lr 1, eps 1, loss =
# the sum of the rows its ids pick) moves the row of every source id in a
# batch by exactly g / (g + 1) (g its count in the batch), so minus the row
# of word s<k> is 0.5 for each update that held pair k. Prints the counts
# in the pairs' order, then the checkpoint's epoch and batch.
import json
import struct
import sys

import numpy as np

data = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', data[:8])[0]
header = json.loads(data[8:8 + n])
meta = header.pop('__metadata__')
begin, end = header['sprobe']['data_offsets']
rows = -np.frombuffer(data[8 + n + begin:8 + n + end], dtype=np.float32)
words = json.loads(meta['tokenizer'])['source']
times = {int(w[1:]): round(float(rows[i]) / 0.5)
         for i, w in enumerate(words) if w.startswith('s')}
print('times', ' '.join(str(times[k]) for k in sorted(times)))
print('epoch', meta['epoch'], 'batch', meta['batch_in_epoch'])
