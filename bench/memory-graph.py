"""memory-graph.py N PATH: writes a graph of N entities (two observations
each) and N/5 relations to PATH, in the reference memory server's JSONL
format. Used by memory-scale.sh and memory-large.sh."""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w", buffering=1 << 20) as f:
    f.write("\n".join(
        f'{{"type":"entity","name":"entity-{i:07d}","entityType":"type-{i % 10}",'
        f'"observations":["observation one of {i:07d}","Observation two: {i:07d} likes tea"]}}'
        for i in range(n)))
    for i in range(n // 5):
        f.write(f'\n{{"type":"relation","from":"entity-{i:07d}","to":"entity-{i * 7919 % n:07d}","relationType":"knows"}}')
