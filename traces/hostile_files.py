#!/usr/bin/env python3
"""Writes the hostile trace files of docs/testing.md ("The attack files through the launcher") into DIR.

Each is small (but for the 48 MiB and 100 MB ones) and once crashed or hung devalloc: memo-shared expansion, a
dict bomb in allocator_settings, a cycle, deep nesting, a quadratic walk, a huge integer string, an EMPTY_DICT
flood (and floods of NONE and of two-entry dicts), a 100 MB CSV field with an escape sequence, and a 1 MB zip holding one 1 GiB line.

    python3 traces/hostile_files.py /tmp/attacks
    for f in /tmp/attacks/*; do JDK_JAVA_OPTIONS=-Xmx1g /usr/bin/time -f '%e s %M KiB' ./devalloc replay "$f" --json; done
"""
import os
import pickle
import sys
import zipfile


def segment(address, blocks):
    return {'device': 0, 'address': address, 'total_size': 2097152, 'stream': 0, 'segment_type': 'large',
            'allocated_size': 512, 'active_size': 512, 'requested_size': 512, 'blocks': blocks}


def main(out):
    os.makedirs(out, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)

    doubled = []
    for _ in range(40):
        doubled = [doubled, doubled]
    write('doubling.pickle', pickle.dumps({'segments': [segment(doubled, [])], 'device_traces': [[]]}, protocol=2))
    bomb = {}
    for _ in range(40):
        bomb = {'a': bomb, 'b': bomb}
    write('dictbomb.pickle', pickle.dumps({'segments': [], 'device_traces': [[]], 'allocator_settings': bomb},
                                          protocol=2))
    cycle = []
    cycle.append([cycle])
    write('cycle.pickle', pickle.dumps({'segments': [segment(cycle, [])], 'device_traces': [[]]}, protocol=2))
    write('deep.pickle', b'\x80\x02' + b'(' * 100000 + b'l' * 100000 + b'.')
    block = {'address': 0, 'size': 512, 'requested_size': 512, 'state': 'active_allocated'}
    repeated = segment(0, [block] * 100000)
    write('repeated.pickle', pickle.dumps({'segments': [repeated] * 100000, 'device_traces': [[]]}, protocol=2))
    write('long.pickle', b'\x80\x02L' + b'7' * 3000000 + b'L\n.')
    with open(os.path.join(out, 'dicts.pickle'), 'wb') as f:
        f.write(b'\x80\x02(')
        for _ in range(48):
            f.write(b'}' * (1 << 20))
        f.write(b'l.')
    with open(os.path.join(out, 'nones.pickle'), 'wb') as f:
        f.write(b'\x80\x02(')
        for _ in range(48):
            f.write(b'N' * (1 << 20))
        f.write(b'l.')
    with open(os.path.join(out, 'dicts2.pickle'), 'wb') as f:
        # dicts of two entries, 11 bytes each: within the reader's budget of containers per byte
        f.write(b'\x80\x02X\x01\x00\x00\x00aq\x000X\x01\x00\x00\x00bq\x010(')
        for _ in range(48):
            f.write(b'}(h\x00h\x01h\x01h\x00u' * ((1 << 20) // 11))
        f.write(b'l.')
    with open(os.path.join(out, 'field.csv'), 'wb') as f:
        f.write(b'seq,action,addr,size,stream,time_us\n1,alloc,\x1b]0;owned\x07')
        for _ in range(100):
            f.write(b'9' * (1 << 20))
        f.write(b',16,0,1\n')
    with zipfile.ZipFile(os.path.join(out, 'bomb.zip'), 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open('trace.csv', 'w', force_zip64=True) as entry:
            for _ in range(64):
                entry.write(b'a' * (1 << 24))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: hostile_files.py DIR')
    main(sys.argv[1])
