//===- GenTransformer.cc - writes a synthetic transformer model -----------===//
//
// gen_transformer --layers N --out FILE [--external] [--hidden H] [--heads A]
//                 [--ffn F] [--shared-constants] [--seed S]
//
// Writes the model TransformerModelGenerator builds. With --external the weights
// are references into a sparse file "<FILE name>.data" next to FILE (all zeros,
// no disk blocks), which keeps 10^6-node models small; without it they are
// seeded random floats inside the model, suitable for the ORT oracle.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tests/bench/TransformerModelGenerator.h"

namespace onnx_rewrite::bench {
namespace {

constexpr const char* kUsage =
    "usage: gen_transformer --layers N --out FILE [--external] [--hidden H] [--heads A]\n"
    "                       [--ffn F] [--shared-constants] [--seed S]\n";

int usage(const std::string& message) {
  std::fprintf(stderr, "gen_transformer: error: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int run(int argc, char** argv) {
  TransformerOptions options;
  std::string out;
  bool have_layers = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto number = [&](int& field) {
      const char* v = value();
      char* end = nullptr;
      const long n = v ? std::strtol(v, &end, 10) : 0;
      if (!v || *end != '\0' || n < 0 || n > 100000000) return false;
      field = static_cast<int>(n);
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--layers") {
      if (!number(options.layers)) return usage("--layers needs a count");
      have_layers = true;
    } else if (arg == "--hidden") {
      if (!number(options.hidden)) return usage("--hidden needs a size");
    } else if (arg == "--heads") {
      if (!number(options.heads)) return usage("--heads needs a count");
    } else if (arg == "--ffn") {
      if (!number(options.ffn)) return usage("--ffn needs a size");
    } else if (arg == "--seed") {
      int seed = 0;
      if (!number(seed)) return usage("--seed needs a number");
      options.seed = static_cast<uint64_t>(seed);
    } else if (arg == "--out" || arg == "-o") {
      const char* v = value();
      if (!v) return usage("--out needs a file");
      out = v;
    } else if (arg == "--external") {
      options.inline_weights = false;
    } else if (arg == "--shared-constants") {
      options.shared_constants = true;
    } else {
      return usage("unknown argument '" + arg + "'");
    }
  }
  if (!have_layers || out.empty()) return usage("--layers and --out are required");
  const size_t slash = out.rfind('/');
  options.external_location = (slash == std::string::npos ? out : out.substr(slash + 1)) + ".data";
  const int64_t nodes = writeTransformerModel(options, out);
  std::printf(
      "%s: %d layers, %lld nodes, %s weights\n", out.c_str(), options.layers,
      static_cast<long long>(nodes),
      options.inline_weights ? "inline" : ("external (" + options.external_location + ")").c_str());
  return 0;
}

}  // namespace
}  // namespace onnx_rewrite::bench

int main(int argc, char** argv) {
  try {
    return onnx_rewrite::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_transformer: error: %s\n", e.what());
    return 1;
  }
}
