//===- gen_exporter_model.cc - write one exporter-shaped transformer model -===//
//
//   gen_exporter_model --family llama --exporter dynamo --opset 18 --layers 2 -o m.onnx
//
// Writes the model of tests/support/ExporterModels.h. --expected prints the fused-op
// counts the shipped rules should reach (JSON) instead of, or besides, writing a model;
// --oracle-args prints the compare.js options its integer inputs need (an empty line for
// heads, which has none).
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "tests/support/ExporterModels.h"

namespace {

using onnx_rewrite::testing::ExporterModelSpec;

const char* kUsage =
    "usage: gen_exporter_model --family bert|gpt2|llama|phi|heads|t5|vit\n"
    "         [--exporter torchscript|dynamo|tf2onnx]\n"
    "         [--opset N] [--layers N] [--hidden N] [--heads N] [--kv-heads N]\n"
    "         [--head-dim N] [--rotary-dim N] [--ffn N] [--max-positions N] [--seed N]\n"
    "         [--causal-mask where|add|sdpa|bool|to4d] [--rope-cache gather|computed]\n"
    "         [--rope-scaling F] [--no-position-ids]\n"
    "         [--embeddings [--vocab N] [--roberta]] [--unoptimized] [--past [--one-token]]\n"
    "         [--stacked-past] [--no-padding-mask] [--mask-sliced-by-keys]\n"
    "         [--presents] [--merged] [--qk-norm] [--qk-norm-after-transpose] [--sdpa-gqa]\n"
    "         [--attention eager|sdpa]\n"
    "         [-o OUT.onnx] [--expected] [--oracle-args]\n"
    "Zero or omitted sizes take the family's defaults (ExporterModels.h).\n";

int toInt(const std::string& flag, const std::string& text) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw std::invalid_argument(flag + ": not an integer: '" + text + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  namespace t = onnx_rewrite::testing;
  ExporterModelSpec spec;
  std::string out;
  bool family_given = false, expected = false, oracle_args = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--family") {
        const std::string v = value();
        if (!t::parseFamily(v, &spec.family)) throw std::invalid_argument("unknown family " + v);
        family_given = true;
      } else if (a == "--exporter") {
        const std::string v = value();
        if (!t::parseExporter(v, &spec.exporter))
          throw std::invalid_argument("unknown exporter " + v);
      } else if (a == "--causal-mask") {
        const std::string v = value();
        if (v != "where" && v != "add" && v != "sdpa" && v != "bool" && v != "to4d")
          throw std::invalid_argument("--causal-mask: where|add|sdpa|bool|to4d");
        spec.causal_mask = v == "where"  ? t::CausalMask::kWhere
                           : v == "add"  ? t::CausalMask::kAdd
                           : v == "sdpa" ? t::CausalMask::kSdpa
                           : v == "bool" ? t::CausalMask::kBool
                                         : t::CausalMask::kTo4d;
      } else if (a == "--rope-cache") {
        const std::string v = value();
        if (v != "gather" && v != "computed")
          throw std::invalid_argument("--rope-cache: gather|computed");
        spec.rope_cache = v == "gather" ? t::RopeCache::kGather : t::RopeCache::kComputed;
      } else if (a == "--roberta") {
        spec.roberta = true;
      } else if (a == "--embeddings") {
        spec.embeddings = true;
      } else if (a == "--vocab") {
        spec.vocab = toInt(a, value());
      } else if (a == "--unoptimized") {
        spec.unoptimized = true;
      } else if (a == "--past") {
        spec.past = true;
      } else if (a == "--mask-sliced-by-keys") {
        spec.mask_sliced_by_keys = true;
      } else if (a == "--stacked-past") {
        spec.stacked_past = true;
      } else if (a == "--no-padding-mask") {
        spec.padding_mask = false;
      } else if (a == "--one-token") {
        spec.one_token = true;
      } else if (a == "--presents") {
        spec.presents = true;
      } else if (a == "--merged") {
        spec.merged = true;
      } else if (a == "--no-position-ids") {
        spec.position_ids_input = false;
      } else if (a == "--qk-norm") {
        spec.qk_norm = true;
      } else if (a == "--qk-norm-after-transpose") {
        spec.qk_norm = spec.qk_norm_after_transpose = true;
      } else if (a == "--sdpa-gqa") {
        spec.sdpa_gqa = true;
      } else if (a == "--rope-scaling") {
        const std::string v = value();
        try {
          spec.rope_scaling = std::stof(v);
        } catch (const std::exception&) {
          throw std::invalid_argument("--rope-scaling: not a number: '" + v + "'");
        }
      } else if (a == "--attention") {
        const std::string v = value();
        if (v != "eager" && v != "sdpa") throw std::invalid_argument("--attention: eager|sdpa");
        spec.attention = v == "eager" ? t::AttentionImpl::kEager : t::AttentionImpl::kSdpa;
      } else if (a == "--opset") {
        spec.opset = toInt(a, value());
      } else if (a == "--layers") {
        spec.layers = toInt(a, value());
      } else if (a == "--hidden") {
        spec.hidden = toInt(a, value());
      } else if (a == "--heads") {
        spec.heads = toInt(a, value());
      } else if (a == "--kv-heads") {
        spec.kv_heads = toInt(a, value());
      } else if (a == "--head-dim") {
        spec.head_dim = toInt(a, value());
      } else if (a == "--rotary-dim") {
        spec.rotary_dim = toInt(a, value());
      } else if (a == "--ffn") {
        spec.ffn = toInt(a, value());
      } else if (a == "--max-positions") {
        spec.max_positions = toInt(a, value());
      } else if (a == "--seed") {
        spec.seed = static_cast<uint64_t>(toInt(a, value()));
      } else if (a == "-o") {
        out = value();
      } else if (a == "--expected") {
        expected = true;
      } else if (a == "--oracle-args") {
        oracle_args = true;
      } else {
        throw std::invalid_argument("unknown argument " + a);
      }
    }
    if (!family_given) throw std::invalid_argument("--family is required");
    if (out.empty() && !expected && !oracle_args)
      throw std::invalid_argument("nothing to do: give -o, --expected or --oracle-args");
  } catch (const std::invalid_argument& e) {
    std::cerr << "gen_exporter_model: " << e.what() << "\n" << kUsage;
    return 2;
  }
  try {
    if (!out.empty()) {
      const onnx::ModelProto model = t::makeExporterModel(spec);
      std::ofstream f(out, std::ios::binary | std::ios::trunc);
      if (!f || !model.SerializeToOstream(&f) || !f.flush())
        throw std::runtime_error("cannot write " + out);
    }
    if (expected) {
      const t::ExpectedFusions e = t::expectedFusions(spec);
      std::cout << "{\"attention\": " << e.attention << ", \"layer_norm\": " << e.layer_norm
                << ", \"skip_layer_norm\": " << e.skip_layer_norm
                << ", \"simplified_norm\": " << e.simplified_norm
                << ", \"skip_simplified_norm\": " << e.skip_simplified
                << ", \"rotary\": " << e.rotary << ", \"gelu\": " << e.gelu
                << ", \"embed_layer_norm\": " << e.embed_layer_norm << "}\n";
    }
    if (oracle_args) std::cout << t::oracleIntRanges(spec) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "gen_exporter_model: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
