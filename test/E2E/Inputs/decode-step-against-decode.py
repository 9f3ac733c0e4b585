"""decode_init + decode_step fed 2, 1, 1 tokens against decode over the
whole prefix (same weights): the logits of every position agree."""
import json, os, subprocess, sys
import numpy as np

exe, weights = sys.argv[1], sys.argv[2]


def run(*args):
    subprocess.run([exe, *args, '--load', weights, '--threads', '1'],
                   check=True, capture_output=True)


info = json.loads(subprocess.run([exe, 'info', '--json'], check=True,
                                 capture_output=True, text=True).stdout)
entries = {e['name']: e for e in info['entries']}
rng = np.random.default_rng(4)
src = rng.integers(4, 10, (2, 5)).astype(np.int32)
tgt = np.concatenate([np.full((2, 1), 2), rng.integers(4, 10, (2, 3))],
                     1).astype(np.int32)
np.save('src.npy', src)
np.save('tgt.npy', tgt)
run('run', 'encode', '--input', 'src=src.npy', '--out-dir', 'enc')
memory = os.path.join('enc', os.listdir('enc')[0])
run('run', 'decode', '--input', 'tgt=tgt.npy', '--input', 'memory=' + memory,
    '--input', 'src=src.npy', '--out-dir', 'full')
full = np.load(os.path.join('full', os.listdir('full')[0]))
run('run', 'decode_init', '--input', 'memory=' + memory, '--out-dir', 'init')
inputs = entries['decode_step']['inputs']
outputs = [o['name'] for o in entries['decode_step']['outputs']]
cache = {i['name']: np.zeros((2, 0, i['shape'][2]), np.float32)
         for i in inputs if i['name'].startswith('self_')}
got = []
for lo, hi in ((0, 2), (2, 3), (3, 4)):
    np.save('new.npy', tgt[:, lo:hi])
    args = ['run', 'decode_step', '--input', inputs[0]['name'] + '=new.npy',
            '--input', 'src=src.npy', '--out-dir', 'step']
    for i in inputs[2:]:
        name = i['name']
        if name in cache:  # the new positions' rows at its end, written
            c = cache[name]  # in place by the step
            np.save(name + '.npy', np.concatenate(
                [c, np.zeros((2, hi - lo, c.shape[2]), np.float32)], 1))
            args += ['--input', name + '=' + name + '.npy']
        else:
            args += ['--input', name + '=init/' + name + '.npy']
    run(*args)
    got.append(np.load('step/' + outputs[0] + '.npy'))
    for name in cache:
        cache[name] = np.load('step/' + name + '.npy')
got = np.concatenate(got, 1)
error = np.abs(got - full).max() / np.abs(full).max()
print('decode_step against decode:', 'ok' if error < 1e-5 else
      'MISMATCH (max relative error %.3e)' % error)
