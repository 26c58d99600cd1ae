//===- EmbedModels.h - BERT embedding layers as exporters emit them -------===//
//
// Builders of the embedding layer of Hugging Face BERT (word + token type + position
// embeddings, then LayerNorm) and DistilBERT (no token types) in the shapes torch.onnx
// emits at opsets 11 to 17: int64 input_ids [B, S], position ids sliced from the
// registered arange buffer (TorchScript of BertEmbeddings), computed by Range or old torch's
// NonZero(ConstantOfShape) and expanded to the ids' shape, a constant (static shapes), or a
// graph input; the LayerNorm decomposed (below opset 17) or one LayerNormalization. Hidden
// size 8, vocabulary 16, 16 positions, 8 token types, so ids drawn from [0, 8) are valid.
// Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tests/support/AttentionModels.h"

namespace onnx_rewrite::testing {

struct EmbedSpec {
  enum class Positions {
    kSlice,        ///< Slice(arange buffer [1, 16], 0, Unsqueeze(Gather(Shape(ids), 1)), axis 1)
    kRange,        ///< Expand(Unsqueeze(Range(0, Gather(Shape(ids), 1), 1), 0), Shape(ids))
    kRangeConcat,  ///< the same expanded to Concat(Unsqueeze(dim 0), Unsqueeze(dim 1))
    kRangeWhere,   ///< that Concat behind Where(Equal(Reshape(c, [-1]), -1), 1, Reshape(c, [-1]))
    kDynamoSlice,  ///< Slice(arange buffer, 0, Shape(ids, start=1, end=2), axis 1) (opset >= 15)
    kNonZero,      ///< Unsqueeze(Squeeze(Transpose(NonZero(ConstantOfShape([S], 1))), 1), 0)
    kConstant,     ///< a constant [1, 5] (static shapes [2, 5])
    kInput,        ///< a graph input position_ids [B, S]
    kFolded,       ///< the looked-up embeddings a constant [2, 5, 8] (static shapes)
  };
  int opset = 13;
  bool segment = true;  ///< token type embeddings (else DistilBERT)
  bool segment_first =
      true;  ///< HF BERT: (word + token type) + position (else word + position first)
  std::string ids_type = "int64";
  Positions positions = Positions::kSlice;
  bool ln_op = false;     ///< one LayerNormalization (else decomposed; forced from opset 17)
  bool multiple = false;  ///< two embedding layers (two inputs sets, two outputs)
  /// An attention mask [B, S] read as com.microsoft.Attention's mask_index,
  /// ReduceSum(Cast(mask, to), axis 1), the Attention reading the LayerNorm (output att).
  bool mask = false;
  // Negatives.
  int pos_hidden = 8;                  ///< hidden size of the position table
  int gather_axis = 0;                 ///< axis of the word Gather (1: not an embedding lookup)
  int ln_axis = -1;                    ///< axis of the LayerNormalization (ln_op)
  int range_start = 0;                 ///< start of the Range / Slice (1: positions off by one)
  bool sum_used = false;               ///< the embedding sum also a graph output
  bool pos_from_other = false;         ///< kRange: the length read from another input's shape
  bool folded_batches_differ = false;  ///< kFolded: the two batches' embeddings differ
};

/// One embedding layer; names get `sfx`, the output is y`sfx`.
inline std::string embedBody(const EmbedSpec& s, const std::string& sfx, std::string& inits,
                             std::string& inputs, std::string& outputs) {
  using P = EmbedSpec::Positions;
  const bool dims_static = s.positions == P::kConstant || s.positions == P::kFolded;
  const std::string bs = dims_static ? "2, 5" : "B, S";
  const std::string ids = "input_ids" + sfx;
  auto nm = [&](const std::string& v) { return v + sfx; };
  const bool axes_input = s.opset >= 13;
  auto unsqueeze = [&](const std::string& out, const std::string& in, const std::string& axis) {
    return axes_input ? out + " = Unsqueeze(" + in + ", " + nm("axis" + axis) + ")\n"
                      : out + " = Unsqueeze <axes = [" + axis + "]> (" + in + ")\n";
  };
  inputs += std::string(inputs.empty() ? "" : ", ") + s.ids_type + "[" + bs + "] " + ids;
  if (s.segment) inputs += ", " + s.ids_type + "[" + bs + "] " + nm("token_type_ids");
  if (s.positions == P::kInput) inputs += ", int64[" + bs + "] " + nm("position_ids");
  if (s.pos_from_other) inputs += ", int64[B, T] " + nm("other");
  if (s.mask) inputs += ", int64[" + bs + "] " + nm("attention_mask");
  outputs +=
      std::string(outputs.empty() ? "" : ", ") + "float[" + bs + ", 8] " + nm(s.mask ? "att" : "y");
  if (s.sum_used) outputs += ", float[" + bs + ", 8] " + nm("s");

  inits += std::string(inits.empty() ? "" : ", ") + "float[16, 8] " + nm("word") + " = " +
           attentionWeights(16, 8, 1) + ", float[16, " + std::to_string(s.pos_hidden) + "] " +
           nm("pos_table") + " = " + attentionWeights(16, s.pos_hidden, 2) + ", float[8] " +
           nm("gamma") + " = {1.5, 0.5, 1, 2, 1, 1, 0.25, 3}, float[8] " + nm("beta") +
           " = {0.1, 0.2, 0, -0.1, 0.5, 0, 0, 1}, int64 " + nm("zero") + " = {" +
           std::to_string(s.range_start) + "}, int64 " + nm("one") + " = {1}, int64 " + nm("dim0") +
           " = {0}";
  if (axes_input)
    inits += ", int64[1] " + nm("axis0") + " = {0}, int64[1] " + nm("axis1") + " = {1}";
  if (s.segment) inits += ", float[8, 8] " + nm("types") + " = " + attentionWeights(8, 8, 3);

  std::string body;
  body += nm("we") + " = Gather <axis = " + std::to_string(s.gather_axis) + "> (" + nm("word") +
          ", " + ids + ")\n";
  std::string pos;
  const std::string shape_of = s.pos_from_other ? nm("other") : ids;
  switch (s.positions) {
    case P::kSlice:
      inits += ", int64[1, 16] " + nm("pos_buffer") +
               " = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, int64[1] " +
               nm("starts") + " = {" + std::to_string(s.range_start) + "}, int64[1] " +
               nm("slice_axes") + " = {1}";
      body += nm("shape") + " = Shape(" + shape_of + ")\n" + nm("seq") + " = Gather <axis = 0> (" +
              nm("shape") + ", " + nm("one") + ")\n" + unsqueeze(nm("seq1"), nm("seq"), "0") +
              nm("pos") + " = Slice(" + nm("pos_buffer") + ", " + nm("starts") + ", " + nm("seq1") +
              ", " + nm("slice_axes") + ")\n";
      pos = nm("pos");
      break;
    case P::kDynamoSlice:
      inits += ", int64[1, 16] " + nm("pos_buffer") +
               " = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, int64[1] " +
               nm("starts") + " = {0}, int64[1] " + nm("slice_axes") + " = {1}, int64[1] " +
               nm("steps") + " = {1}";
      body += nm("seq1") + " = Shape <start = 1, end = 2> (" + ids + ")\n" + nm("pos") +
              " = Slice(" + nm("pos_buffer") + ", " + nm("starts") + ", " + nm("seq1") + ", " +
              nm("slice_axes") + ", " + nm("steps") + ")\n";
      pos = nm("pos");
      break;
    case P::kRange:
    case P::kRangeConcat:
    case P::kRangeWhere:
      body += nm("shape") + " = Shape(" + shape_of + ")\n" + nm("seq") + " = Gather <axis = 0> (" +
              nm("shape") + ", " + nm("one") + ")\n" + nm("r") + " = Range(" + nm("zero") + ", " +
              nm("seq") + ", " + nm("one") + ")\n" + unsqueeze(nm("ru"), nm("r"), "0");
      if (s.positions == P::kRange) {
        body += nm("pos") + " = Expand(" + nm("ru") + ", " + nm("shape") + ")\n";
      } else {
        body += nm("batch") + " = Gather <axis = 0> (" + nm("shape") + ", " + nm("dim0") + ")\n" +
                unsqueeze(nm("b1"), nm("batch"), "0") + unsqueeze(nm("s1"), nm("seq"), "0") +
                nm("target") + " = Concat <axis = 0> (" + nm("b1") + ", " + nm("s1") + ")\n";
        std::string target = nm("target");
        if (s.positions == P::kRangeWhere) {
          // TorchScript's expand(batch, seq) of a size that could be -1.
          inits += ", int64[1] " + nm("flat") + " = {-1}, int64[2] " + nm("minus1") +
                   " = {-1, -1}, int64[2] " + nm("ones2") + " = {1, 1}";
          body += nm("flat_t") + " = Reshape(" + target + ", " + nm("flat") + ")\n" + nm("eq") +
                  " = Equal(" + nm("flat_t") + ", " + nm("minus1") + ")\n" + nm("fixed") +
                  " = Where(" + nm("eq") + ", " + nm("ones2") + ", " + nm("flat_t") + ")\n";
          target = nm("fixed");
        }
        body += nm("pos") + " = Expand(" + nm("ru") + ", " + target + ")\n";
      }
      pos = nm("pos");
      break;
    case P::kNonZero:
      body += nm("shape") + " = Shape(" + ids + ")\n" + nm("seq") + " = Gather <axis = 0> (" +
              nm("shape") + ", " + nm("one") + ")\n" + unsqueeze(nm("seq1"), nm("seq"), "0") +
              nm("ones") + " = ConstantOfShape <value = int64[1] {1}> (" + nm("seq1") + ")\n" +
              nm("nz") + " = NonZero(" + nm("ones") + ")\n" + nm("nzt") + " = Transpose(" +
              nm("nz") + ")\n" +
              (axes_input ? nm("row") + " = Squeeze(" + nm("nzt") + ", " + nm("axis1") + ")\n"
                          : nm("row") + " = Squeeze <axes = [1]> (" + nm("nzt") + ")\n") +
              unsqueeze(nm("ru"), nm("row"), "0") + nm("pos") + " = Expand(" + nm("ru") + ", " +
              nm("shape") + ")\n";
      pos = nm("pos");
      break;
    case P::kConstant:
      inits += ", int64[1, 5] " + nm("pos") + " = {" +
               std::string(s.range_start == 0 ? "0, 1, 2, 3, 4" : "1, 2, 3, 4, 5") + "}";
      pos = nm("pos");
      break;
    case P::kInput:
      pos = nm("position_ids");
      break;
    case P::kFolded: {
      // Rows 0 .. 4 of the position table, once per batch.
      const std::string rows = attentionWeights(5, 8, 2);
      const std::string other = s.folded_batches_differ ? attentionWeights(5, 8, 6) : rows;
      inits += ", float[2, 5, 8] " + nm("pe") + " = {" + rows.substr(1, rows.size() - 2) + ", " +
               other.substr(1, other.size() - 2) + "}";
      break;
    }
  }
  if (s.positions != P::kFolded)
    body += nm("pe") + " = Gather(" + nm("pos_table") + ", " + pos + ")\n";
  std::string sum;
  if (!s.segment) {
    body += nm("s") + " = Add(" + nm("we") + ", " + nm("pe") + ")\n";
  } else {
    body += nm("te") + " = Gather(" + nm("types") + ", " + nm("token_type_ids") + ")\n";
    body += s.segment_first ? nm("wt") + " = Add(" + nm("we") + ", " + nm("te") + ")\n" + nm("s") +
                                  " = Add(" + nm("wt") + ", " + nm("pe") + ")\n"
                            : nm("wp") + " = Add(" + nm("we") + ", " + nm("pe") + ")\n" + nm("s") +
                                  " = Add(" + nm("wp") + ", " + nm("te") + ")\n";
  }
  const bool ln_op = s.ln_op || s.opset >= 17;
  if (ln_op) {
    body += nm("y") + " = LayerNormalization <axis = " + std::to_string(s.ln_axis) +
            ", epsilon = 1e-12> (" + nm("s") + ", " + nm("gamma") + ", " + nm("beta") + ")\n";
  } else {
    // torch.onnx's LayerNorm below opset 17 (the layer_norm rules fuse it first).
    inits += ", float " + nm("two") + " = {2.0}, float " + nm("eps") + " = {1e-12}";
    body += nm("mean") + " = ReduceMean <axes = [-1]> (" + nm("s") + ")\n" + nm("d") + " = Sub(" +
            nm("s") + ", " + nm("mean") + ")\n" + nm("p") + " = Pow(" + nm("d") + ", " + nm("two") +
            ")\n" + nm("var") + " = ReduceMean <axes = [-1]> (" + nm("p") + ")\n" + nm("ve") +
            " = Add(" + nm("var") + ", " + nm("eps") + ")\n" + nm("std") + " = Sqrt(" + nm("ve") +
            ")\n" + nm("n") + " = Div(" + nm("d") + ", " + nm("std") + ")\n" + nm("m") + " = Mul(" +
            nm("n") + ", " + nm("gamma") + ")\n" + nm("y") + " = Add(" + nm("m") + ", " +
            nm("beta") + ")\n";
  }
  if (s.mask) {
    inits += ", float[8, 24] " + nm("qkv_w") + " = " + attentionWeights(8, 24, 4) + ", float[24] " +
             nm("qkv_b") + " = " + attentionWeights(1, 24, 5);
    body +=
        nm("mc") + " = Cast <to = " + "6" + "> (" + nm("attention_mask") + ")\n" +
        (axes_input
             ? nm("mi") + " = ReduceSum <keepdims = 0> (" + nm("mc") + ", " + nm("axis1") + ")\n"
             : nm("mi") + " = ReduceSum <axes = [1], keepdims = 0> (" + nm("mc") + ")\n") +
        nm("att") + " = com.microsoft.Attention <num_heads = 2> (" + nm("y") + ", " + nm("qkv_w") +
        ", " + nm("qkv_b") + ", " + nm("mi") + ")\n";
  }
  return body;
}

/// The embedding layer(s) of `s` as a model in ONNX text format.
inline std::string embedModel(const EmbedSpec& s) {
  std::string inits, inputs, outputs;
  std::string body = embedBody(s, "", inits, inputs, outputs);
  if (s.multiple) body += embedBody(s, "_2", inits, inputs, outputs);
  const std::string ms = s.mask ? ", \"com.microsoft\" : 1" : "";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + ms + "]>\nembed (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
