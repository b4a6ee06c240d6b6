#!/usr/bin/env bash
# Three identical quick runs on the quiet CPU, then the gate A/A and at 1.1x, then the endings that must not pass.
cd /work/main
PY=.venv/bin/python
OUT=/tmp/final2
S=/tmp/final2/store
rm -rf $S
for i in 1 2 3; do
  start=$(date +%s)
  if [ $i = 1 ]; then extra=""; else extra="--benchmark-compare --fail-on-slower=10%"; fi
  $PY -m pytest perf/ --cpu-affinity quiet -p no:cacheprovider --benchmark-autosave --benchmark-storage $S \
     --benchmark-json $OUT/run$i.json $extra > $OUT/run$i.txt 2>&1
  echo "run$i exit $? wall $(( $(date +%s) - start )) s" >> $OUT/runs.txt
done
start=$(date +%s); $PY -m perf.gate HEAD HEAD --json $OUT/gate-aa.json > $OUT/gate-aa.txt 2>&1
echo "gate A/A exit $? wall $(( $(date +%s) - start )) s" >> $OUT/runs.txt
start=$(date +%s); $PY -m perf.gate HEAD HEAD --candidate-slowdown '*=1.1' --json $OUT/gate-slowed.json > $OUT/gate-slowed.txt 2>&1
echo "gate 1.1x exit $? wall $(( $(date +%s) - start )) s" >> $OUT/runs.txt
$PY -m perf.gate HEAD HEAD --devices tpu > $OUT/gate-tpu.txt 2>&1; echo "gate --devices tpu exit $?" >> $OUT/runs.txt
$PY -m perf.gate HEAD HEAD --devices gpu > $OUT/gate-gpu.txt 2>&1; echo "gate --devices gpu exit $?" >> $OUT/runs.txt
$PY -m pytest perf/ -p no:cacheprovider --benchmark-storage /tmp/final2/empty --benchmark-compare --fail-on-slower=10% > $OUT/compare-none.txt 2>&1
echo "compare with no saved run exit $?" >> $OUT/runs.txt
