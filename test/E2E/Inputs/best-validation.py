# Usage: best-validation.py TRAIN.err
# Reads train's validation lines ("validation step S: loss L, accuracy A,
# BLEU B ...") and prints the one --keep-best (--best-by bleu) must keep:
# the highest BLEU, the first such step on ties, as "highest: step S, BLEU
# B" (B as printed). Exits 1 when there is no validation line.
import re
import sys

best = None
for line in open(sys.argv[1]):
    match = re.match(r"validation step (\d+): .*BLEU ([0-9.]+)", line)
    if match and (best is None or float(match.group(2)) > float(best[1])):
        best = match.groups()
if best is None:
    sys.exit("best-validation: no validation line in " + sys.argv[1])
print(f"highest: step {best[0]}, BLEU {best[1]}")
