//===- FunctionInlining.cc - calls of model-local functions, expanded -----===//
#include "runtime/io/FunctionInlining.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/unknown_field_set.h>

#include "runtime/graph/OpId.h"
#include "runtime/graph/QuotedName.h"

namespace onnx_rewrite {
namespace {

using google::protobuf::RepeatedPtrField;
using google::protobuf::UnknownField;

// Fields newer than ONNX 1.12's classes, which keep them as unknown fields.
constexpr int kNodeOverloadField = 8;
constexpr int kFunctionAttributeProtoField = 11;
constexpr int kFunctionOverloadField = 13;

/// More nodes than this from inlining alone (calls nested k deep, each calling twice,
/// grow as 2^k) and the remaining calls stay calls.
constexpr int64_t kMaxInlinedNodes = 4'000'000;

/// Calls nested deeper than this stay calls: inlining recurses once per level (dynamo's
/// exports nest module, submodule and torchlib functions a handful deep).
constexpr size_t kMaxCallNesting = 64;

/// `M` a generated message: its unknown_fields() does not start protobuf's reflection
/// (which builds the descriptors of all of onnx.proto on first use).
template <typename M>
std::vector<std::string> unknownStrings(const M& m, int field) {
  std::vector<std::string> out;
  const auto& fields = m.unknown_fields();
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == field &&
        fields.field(i).type() == UnknownField::TYPE_LENGTH_DELIMITED)
      out.push_back(fields.field(i).length_delimited());
  return out;
}

template <typename M>
std::string unknownString(const M& m, int field) {
  std::vector<std::string> all = unknownStrings(m, field);
  return all.empty() ? std::string() : all.back();
}

std::string functionKey(std::string_view domain, std::string_view name, std::string_view overload) {
  std::string key(canonicalDomain(domain));
  key += '\0';
  key += name;
  key += '\0';
  key += overload;
  return key;
}

std::string keyOfCall(const onnx::NodeProto& node) {
  return functionKey(node.domain(), node.op_type(), unknownString(node, kNodeOverloadField));
}

std::string keyOfFunction(const onnx::FunctionProto& f) {
  return functionKey(f.domain(), f.name(), unknownString(f, kFunctionOverloadField));
}

std::string describe(const onnx::FunctionProto& f) {
  return "local function " + quoted(f.name()) + " (domain " + quoted(f.domain()) + ")";
}

template <typename F>
void forEachSubgraph(onnx::NodeProto& node, F&& f) {
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.has_g()) f(*a.mutable_g());
    for (onnx::GraphProto& g : *a.mutable_graphs()) f(g);
  }
}

template <typename F>
void forEachSubgraph(const onnx::NodeProto& node, F&& f) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g()) f(a.g());
    for (const onnx::GraphProto& g : a.graphs()) f(g);
  }
}

void collectNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names);

/// Every name `nodes` read or write, their bodies included.
void collectNames(const RepeatedPtrField<onnx::NodeProto>& nodes,
                  std::unordered_set<std::string>& names) {
  for (const onnx::NodeProto& n : nodes) {
    names.insert(n.input().begin(), n.input().end());
    names.insert(n.output().begin(), n.output().end());
    forEachSubgraph(n, [&](const onnx::GraphProto& body) { collectNames(body, names); });
  }
}

/// Every name a graph defines or reads, bodies included.
void collectNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names) {
  for (const auto& v : g.input()) names.insert(v.name());
  for (const auto& v : g.output()) names.insert(v.name());
  for (const auto& v : g.value_info()) names.insert(v.name());
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& t : g.sparse_initializer()) names.insert(t.values().name());
  collectNames(g.node(), names);
}

/// Names a function body defines: its node outputs, and whatever its bodies define.
void collectDefinitions(const onnx::GraphProto& g, std::unordered_set<std::string>& defined);

void collectDefinitions(const RepeatedPtrField<onnx::NodeProto>& nodes,
                        std::unordered_set<std::string>& defined) {
  for (const onnx::NodeProto& n : nodes) {
    for (const std::string& out : n.output())
      if (!out.empty()) defined.insert(out);
    forEachSubgraph(n, [&](const onnx::GraphProto& body) { collectDefinitions(body, defined); });
  }
}

void collectDefinitions(const onnx::GraphProto& g, std::unordered_set<std::string>& defined) {
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& t : g.sparse_initializer()) defined.insert(t.values().name());
  collectDefinitions(g.node(), defined);
}

/// The first name `nodes` (bodies included) read that `known` lacks, or null.
const std::string* firstUnknownRead(const RepeatedPtrField<onnx::NodeProto>& nodes,
                                    const std::unordered_set<std::string>& known) {
  for (const onnx::NodeProto& n : nodes) {
    for (const std::string& in : n.input())
      if (!in.empty() && !known.count(in)) return &in;
    const std::string* missing = nullptr;
    forEachSubgraph(n, [&](const onnx::GraphProto& body) {
      if (!missing) missing = firstUnknownRead(body.node(), known);
      for (const auto& out : body.output())
        if (!missing && !known.count(out.name())) missing = &out.name();
    });
    if (missing) return missing;
  }
  return nullptr;
}

/// One local function, as the inliner sees it.
struct LocalFunction {
  const onnx::FunctionProto* proto = nullptr;
  /// Empty when every call can be inlined; else why none is.
  std::string refusal;
  /// Attribute defaults (FunctionProto.attribute_proto, ONNX >= 1.15) by name.
  std::unordered_map<std::string, onnx::AttributeProto> defaults;
  /// Every name the body defines (renamed at each call).
  std::unordered_set<std::string> definitions;
};

class Inliner {
  /// Names of a function body to the names its copy at one call uses.
  using Renaming = std::unordered_map<std::string, std::string>;

 public:
  explicit Inliner(onnx::ModelProto& model) : model_(model) {
    for (const auto& o : model.opset_import())
      model_opsets_.emplace(std::string(canonicalDomain(o.domain())), o.version());
    for (const onnx::FunctionProto& f : model.functions()) {
      auto [it, fresh] = functions_.try_emplace(keyOfFunction(f));
      if (!fresh) {
        it->second.refusal = "defined more than once";
        continue;
      }
      describeFunction(f, it->second);
    }
    collectNames(model.graph(), taken_);
    for (const onnx::FunctionProto& f : model.functions()) {
      taken_.insert(f.input().begin(), f.input().end());
      taken_.insert(f.output().begin(), f.output().end());
      collectNames(f.node(), taken_);
    }
  }

  InliningReport run() {
    std::vector<const LocalFunction*> stack;
    inlineIn(*model_.mutable_graph()->mutable_node(), stack);
    if (called_.empty()) return {};  // no call anywhere: the model stays as it is
    addImports();
    for (const auto& [key, fn] : functions_)
      if (!fn.refusal.empty() && called_.count(key))
        report_.kept.push_back(describe(*fn.proto) + " kept as calls: " + fn.refusal);
    std::sort(report_.kept.begin(), report_.kept.end());
    dropUncalledFunctions();
    return std::move(report_);
  }

 private:
  void describeFunction(const onnx::FunctionProto& f, LocalFunction& fn) {
    fn.proto = &f;
    for (const std::string& bytes : unknownStrings(f, kFunctionAttributeProtoField)) {
      onnx::AttributeProto a;
      if (a.ParseFromString(bytes)) fn.defaults[a.name()] = std::move(a);
    }
    for (const auto& o : f.opset_import()) {
      auto it = model_opsets_.find(std::string(canonicalDomain(o.domain())));
      if (it != model_opsets_.end() && it->second != o.version()) {
        fn.refusal = "it imports " +
                     quoted(o.domain().empty() ? std::string("ai.onnx") : o.domain()) +
                     " version " + std::to_string(o.version()) + ", the model version " +
                     std::to_string(it->second);
        return;
      }
    }
    collectDefinitions(f.node(), fn.definitions);
    std::unordered_set<std::string> known = fn.definitions;
    known.insert(f.input().begin(), f.input().end());
    if (const std::string* missing = firstUnknownRead(f.node(), known)) {
      fn.refusal = "it reads " + quoted(*missing) + ", which it does not define";
      return;
    }
    for (const std::string& out : f.output())
      if (!known.count(out)) {
        fn.refusal = "its output " + quoted(out) + " is never defined";
        return;
      }
  }

  void inlineIn(RepeatedPtrField<onnx::NodeProto>& nodes,
                std::vector<const LocalFunction*>& stack) {
    // The callee of each node (functions_.end() for an op), looked up once.
    std::vector<std::unordered_map<std::string, LocalFunction>::iterator> callee;
    callee.reserve(static_cast<size_t>(nodes.size()));
    bool any_call = false;
    for (onnx::NodeProto& n : nodes) {
      callee.push_back(functions_.find(keyOfCall(n)));
      any_call |= callee.back() != functions_.end();
      forEachSubgraph(n, [&](onnx::GraphProto& body) { inlineIn(*body.mutable_node(), stack); });
    }
    if (!any_call) return;
    RepeatedPtrField<onnx::NodeProto> out;
    out.Reserve(nodes.size());
    for (int i = 0; i < nodes.size(); ++i) {
      onnx::NodeProto& n = nodes[i];
      auto it = callee[static_cast<size_t>(i)];
      if (it == functions_.end()) {
        *out.Add() = std::move(n);
        continue;
      }
      LocalFunction& fn = it->second;
      called_.insert(it->first);
      if (fn.refusal.empty() && std::count(stack.begin(), stack.end(), &fn))
        fn.refusal = "it calls itself";
      if (fn.refusal.empty() && stack.size() >= kMaxCallNesting)
        fn.refusal = "its calls nest deeper than " + std::to_string(kMaxCallNesting) + " functions";
      if (fn.refusal.empty() && inlined_nodes_ + fn.proto->node_size() > kMaxInlinedNodes)
        fn.refusal = "inlining would add more than " + std::to_string(kMaxInlinedNodes) + " nodes";
      if (!fn.refusal.empty()) {
        *out.Add() = std::move(n);
        continue;
      }
      RepeatedPtrField<onnx::NodeProto> body = instantiate(fn, n);
      inlined_nodes_ += body.size();
      ++report_.calls_inlined;
      inlined_.insert(&fn);
      stack.push_back(&fn);
      inlineIn(body, stack);
      stack.pop_back();
      for (onnx::NodeProto& b : body) *out.Add() = std::move(b);
    }
    nodes.Swap(&out);
  }

  /// A name no graph of the model uses yet, close to `wanted`.
  std::string freshName(const std::string& wanted) {
    std::string name = wanted;
    for (int i = 1; taken_.count(name); ++i) name = wanted + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }

  /// The body of `fn` as it stands at `call`: formal inputs and outputs renamed to the
  /// call's, every other value and node name made unique, attribute references resolved.
  RepeatedPtrField<onnx::NodeProto> instantiate(const LocalFunction& fn,
                                                const onnx::NodeProto& call) {
    const onnx::FunctionProto& f = *fn.proto;
    const std::string prefix = (call.name().empty() ? f.name() : call.name()) + "/";
    Renaming rename;
    for (int i = 0; i < f.input_size(); ++i)
      rename[f.input(i)] = i < call.input_size() ? call.input(i) : std::string();
    RepeatedPtrField<onnx::NodeProto> body;
    for (int i = 0; i < f.output_size(); ++i) {
      const std::string& wanted = i < call.output_size() ? call.output(i) : std::string();
      auto [it, fresh] = rename.try_emplace(f.output(i), wanted);
      if (fresh && wanted.empty()) it->second = freshName(prefix + f.output(i));
      if (!fresh && !wanted.empty()) {
        // An output that is an input, or another output: an Identity gives it its name.
        onnx::NodeProto& copy = *body.Add();
        copy.set_op_type("Identity");
        copy.set_name(freshName(prefix + "output_" + std::to_string(i)));
        copy.add_input(it->second);
        copy.add_output(wanted);
      }
    }
    for (const std::string& name : fn.definitions)
      if (!rename.count(name)) rename[name] = freshName(prefix + name);
    RepeatedPtrField<onnx::NodeProto> nodes(f.node());
    for (onnx::NodeProto& n : nodes) {
      if (!n.name().empty()) n.set_name(freshName(prefix + n.name()));
      renameNode(n, rename, fn, call);
    }
    // The Identities read values the body defines: they go after it.
    for (onnx::NodeProto& copy : body) *nodes.Add() = std::move(copy);
    return nodes;
  }

  static void applyRenaming(const Renaming& rename, std::string& name) {
    auto it = rename.find(name);
    if (it != rename.end()) name = it->second;
  }

  void renameNode(onnx::NodeProto& n, const Renaming& rename, const LocalFunction& fn,
                  const onnx::NodeProto& call) {
    for (std::string& in : *n.mutable_input()) applyRenaming(rename, in);
    for (std::string& out : *n.mutable_output()) applyRenaming(rename, out);
    auto& attrs = *n.mutable_attribute();
    for (int i = 0; i < attrs.size();) {
      onnx::AttributeProto& a = attrs[i];
      if (!a.ref_attr_name().empty()) {
        const onnx::AttributeProto* given = nullptr;
        for (const onnx::AttributeProto& c : call.attribute())
          if (c.name() == a.ref_attr_name()) given = &c;
        auto def = fn.defaults.find(a.ref_attr_name());
        if (!given && def != fn.defaults.end()) given = &def->second;
        if (!given) {  // neither given nor defaulted: the attribute is absent (ONNX's rule)
          attrs.DeleteSubrange(i, 1);
          continue;
        }
        const std::string name = a.name();
        a = *given;
        a.set_name(name);
      }
      if (a.has_g()) renameGraph(*a.mutable_g(), rename, fn, call);
      for (onnx::GraphProto& g : *a.mutable_graphs()) renameGraph(g, rename, fn, call);
      ++i;
    }
  }

  void renameGraph(onnx::GraphProto& g, const Renaming& rename, const LocalFunction& fn,
                   const onnx::NodeProto& call) {
    for (auto& v : *g.mutable_input()) applyRenaming(rename, *v.mutable_name());
    for (auto& v : *g.mutable_output()) applyRenaming(rename, *v.mutable_name());
    for (auto& v : *g.mutable_value_info()) applyRenaming(rename, *v.mutable_name());
    for (auto& t : *g.mutable_initializer()) applyRenaming(rename, *t.mutable_name());
    for (auto& t : *g.mutable_sparse_initializer())
      applyRenaming(rename, *t.mutable_values()->mutable_name());
    for (onnx::NodeProto& n : *g.mutable_node()) renameNode(n, rename, fn, call);
  }

  /// Domains an inlined body imports that the model lacks are imported at the body's
  /// version.
  void addImports() {
    for (const LocalFunction* fn : inlined_)
      for (const auto& o : fn->proto->opset_import()) {
        const std::string domain(canonicalDomain(o.domain()));
        if (model_opsets_.emplace(domain, o.version()).second) {
          onnx::OperatorSetIdProto& added = *model_.add_opset_import();
          added.set_domain(o.domain());
          added.set_version(o.version());
        }
      }
  }

  /// Keeps the functions some remaining call (in the graph or a kept function) uses.
  void dropUncalledFunctions() {
    std::unordered_set<std::string> used;
    std::vector<const onnx::FunctionProto*> work;
    auto scan = [&](const RepeatedPtrField<onnx::NodeProto>& nodes, auto& self) -> void {
      for (const onnx::NodeProto& n : nodes) {
        auto it = functions_.find(keyOfCall(n));
        if (it != functions_.end() && used.insert(it->first).second)
          work.push_back(it->second.proto);
        forEachSubgraph(n, [&](const onnx::GraphProto& body) { self(body.node(), self); });
      }
    };
    scan(model_.graph().node(), scan);
    while (!work.empty()) {
      const onnx::FunctionProto* f = work.back();
      work.pop_back();
      scan(f->node(), scan);
    }
    if (used.size() == functions_.size()) return;
    // LocalFunction::proto points into the list about to be rebuilt: decide which to keep,
    // forget the table, then move the kept ones.
    std::vector<bool> keep;
    for (const onnx::FunctionProto& f : model_.functions())
      keep.push_back(used.count(keyOfFunction(f)));
    functions_.clear();
    inlined_.clear();
    RepeatedPtrField<onnx::FunctionProto> kept;
    for (int i = 0; i < model_.functions_size(); ++i) {
      if (keep[i])
        *kept.Add() = std::move(*model_.mutable_functions(i));
      else
        ++report_.functions_removed;
    }
    model_.mutable_functions()->Swap(&kept);
  }

  onnx::ModelProto& model_;
  std::unordered_map<std::string, int64_t> model_opsets_;
  std::unordered_map<std::string, LocalFunction> functions_;
  std::unordered_set<std::string> taken_;
  std::unordered_set<std::string> called_;
  std::unordered_set<const LocalFunction*> inlined_;
  int64_t inlined_nodes_ = 0;
  InliningReport report_;
};

bool anyCall(const RepeatedPtrField<onnx::NodeProto>& nodes,
             const std::unordered_set<std::string>& keys) {
  for (const onnx::NodeProto& n : nodes) {
    if (keys.count(keyOfCall(n))) return true;
    bool found = false;
    forEachSubgraph(
        n, [&](const onnx::GraphProto& body) { found = found || anyCall(body.node(), keys); });
    if (found) return true;
  }
  return false;
}

}  // namespace

bool callsLocalFunctions(const onnx::ModelProto& model) {
  if (model.functions_size() == 0) return false;
  std::unordered_set<std::string> keys;
  for (const onnx::FunctionProto& f : model.functions()) keys.insert(keyOfFunction(f));
  return anyCall(model.graph().node(), keys);
}

InliningReport inlineLocalFunctions(onnx::ModelProto& model) {
  if (model.functions_size() == 0) return {};
  return Inliner(model).run();
}

}  // namespace onnx_rewrite
