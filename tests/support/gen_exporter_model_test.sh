#!/usr/bin/env bash
# gen_exporter_model writes every family in both exporters' forms, each model runs in
# ONNX Runtime as written (compare.js against itself), and bad arguments fail cleanly.
#   gen_exporter_model_test.sh GEN_EXPORTER_MODEL
set -euo pipefail
gen=$1
here=$(cd "$(dirname "$0")" && pwd)
compare="$here/../oracle/compare.js"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for family in bert gpt2 llama phi heads t5 vit; do
  for exporter in torchscript dynamo; do
    model="$tmp/${family}_$exporter.onnx"
    "$gen" --family "$family" --exporter "$exporter" --layers 2 -o "$model"
    # shellcheck disable=SC2046 # the options are words
    node "$compare" "$model" "$model" --dim batch=2 --dim seq=5 \
      $("$gen" --family "$family" --oracle-args) >/dev/null
    "$gen" --family "$family" --exporter "$exporter" --expected | grep -q '"attention": 2'
  done
done

"$gen" --family llama --exporter dynamo --opset 23 --layers 1 -o "$tmp/llama23.onnx"
"$gen" --family bert --opset 11 --embeddings --expected | grep -q '"embed_layer_norm": 1'
"$gen" --family bert --embeddings --roberta --layers 1 -o "$tmp/roberta.onnx"
# shellcheck disable=SC2046
node "$compare" "$tmp/roberta.onnx" "$tmp/roberta.onnx" --dim batch=2 --dim seq=5 \
  $("$gen" --family bert --embeddings --roberta --oracle-args) >/dev/null
"$gen" --family llama --exporter dynamo --unoptimized --layers 1 -o "$tmp/llama_raw.onnx"
"$gen" --family vit --embeddings --attention eager --layers 1 -o "$tmp/vit_pixels.onnx"
node "$compare" "$tmp/vit_pixels.onnx" "$tmp/vit_pixels.onnx" --dim batch=2 >/dev/null

# optimum's merged decoder runs down either branch: use_cache_branch true with 3 cached
# tokens, false with an empty cache.
for family in gpt2 llama; do
  model="$tmp/${family}_merged.onnx"
  "$gen" --family "$family" --merged -o "$model"
  # shellcheck disable=SC2046 # the options are words
  node "$compare" "$model" "$model" --dim batch=2 --dim seq=2 --dim past=3 --dim total=5 \
    $("$gen" --family "$family" --merged --oracle-args) --int-range use_cache_branch=1:2 >/dev/null
  # shellcheck disable=SC2046
  node "$compare" "$model" "$model" --dim batch=2 --dim seq=5 --dim past=0 --dim total=5 \
    $("$gen" --family "$family" --merged --oracle-args) --int-range use_cache_branch=0:1 >/dev/null
done
# TensorFlow's BERT through tf2onnx: a static sequence of 8, an int32 input_mask, the
# batch of each input named unk__N.
"$gen" --family bert --exporter tf2onnx --opset 10 -o "$tmp/bert_tf.onnx"
# shellcheck disable=SC2046
node "$compare" "$tmp/bert_tf.onnx" "$tmp/bert_tf.onnx" --dim unk__0=2 --dim unk__1=2 \
  $("$gen" --family bert --exporter tf2onnx --oracle-args) >/dev/null
"$gen" --family llama --exporter dynamo --presents --layers 1 -o "$tmp/llama_first.onnx"
"$gen" --family llama --exporter dynamo --causal-mask sdpa --sdpa-gqa --layers 1 -o "$tmp/gqa.onnx"
# shellcheck disable=SC2046
node "$compare" "$tmp/gqa.onnx" "$tmp/gqa.onnx" --dim batch=2 --dim seq=5 \
  $("$gen" --family llama --oracle-args) >/dev/null

fails() {
  local status=0
  "$gen" "$@" >/dev/null 2>"$tmp/err" || status=$?
  if [[ $status -eq 0 ]]; then
    echo "expected failure: gen_exporter_model $*" >&2
    exit 1
  fi
}
fails --family gemma -o "$tmp/x.onnx"
fails --family heads --causal-mask add -o "$tmp/x.onnx"
fails --family llama --exporter torchscript --opset 18 -o "$tmp/x.onnx"
fails --family bert --kv-heads 2 -o "$tmp/x.onnx"
fails --family llama --layers two -o "$tmp/x.onnx"
fails --family llama --embeddings -o "$tmp/x.onnx"
fails --family bert --unoptimized -o "$tmp/x.onnx"
fails --layers 2 -o "$tmp/x.onnx"
fails --family bert --merged -o "$tmp/x.onnx"
fails --family llama --attention eager -o "$tmp/x.onnx"
fails --family vit --opset 11 --attention sdpa -o "$tmp/x.onnx"
fails --family llama --past --presents -o "$tmp/x.onnx"
fails --family llama --exporter torchscript --causal-mask sdpa --sdpa-gqa -o "$tmp/x.onnx"
fails --family llama --exporter dynamo --sdpa-gqa -o "$tmp/x.onnx"
fails --family bert --roberta -o "$tmp/x.onnx"
fails --family gpt2 --exporter tf2onnx -o "$tmp/x.onnx"
fails --family bert --exporter tf2onnx --embeddings -o "$tmp/x.onnx"
fails --family bert --exporter tf2onnx --opset 17 -o "$tmp/x.onnx"
echo "gen_exporter_model: OK"
