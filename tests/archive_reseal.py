#!/usr/bin/python3
"""archive_reseal.py TOP: after members of an extracted archive (TOP = its top directory) were
edited, redo what a careful forger redoes so that only the edit itself is false: the member sizes
provenance.json records (files.members[].bytes), the size column of README.txt's member list,
and every line of MANIFEST.sha256. Used by tests/archive_verify.sh and tests/archive_forge.sh."""
import hashlib
import json
import os
import re
import sys

top = sys.argv[1]
prov_path = os.path.join(top, 'provenance.json')
prov = json.load(open(prov_path))
for m in prov['files']['members']:
    m['bytes'] = os.path.getsize(os.path.join(top, m['member']))
open(prov_path, 'w').write(json.dumps(prov, indent=2, ensure_ascii=False))
readme = os.path.join(top, 'README.txt')
lines = open(readme).read().split('\n')
for i, line in enumerate(lines):
    m = re.match(r'^  (\S+) +(\d+) bytes  (.*)$', line)
    if m and os.path.exists(os.path.join(top, m.group(1))):
        size = os.path.getsize(os.path.join(top, m.group(1)))
        lines[i] = '  %-34s %12d bytes  %s' % (m.group(1), size, m.group(3))
open(readme, 'w').write('\n'.join(lines))
sums = []
for d, _, files in os.walk(top):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), top)
        if rel != 'MANIFEST.sha256':
            digest = hashlib.sha256(open(os.path.join(d, f), 'rb').read()).hexdigest()
            sums.append((rel, '%s  %s\n' % (digest, rel)))
open(os.path.join(top, 'MANIFEST.sha256'), 'w').write(''.join(s for _, s in sorted(sums)))
