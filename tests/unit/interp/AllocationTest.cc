//===- AllocationTest.cc - a failed attempt allocates nothing -------------===//
//
// The interpreter keeps its search state in buffers reused across attempts, so
// once they have grown a failed attempt must not touch the heap (explain mode,
// which builds reasons, is exempt). This binary counts every operator new to
// hold it to that.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "runtime/driver/Rewriter.h"
#include "runtime/graph/Model.h"
#include "tests/unit/interp/InterpTestSupport.h"
#include "tests/unit/interp/LayerNormRule.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// Out of line, so GCC does not inline them into std::allocator and then warn that free()
// releases what operator new returned (it is malloc's, here).
__attribute__((noinline)) void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace onnx_rewrite {
namespace {

using namespace interp_test;

/// Allocations made by `attempts` failed attempts of `rule` at every candidate of `text`,
/// after two warm-up rounds.
uint64_t allocationsOfFailedAttempts(const std::string& text, const Rule& rule, int attempts) {
  onnx::ModelProto proto = testing::parseModel(text);
  Model model(proto);
  Graph& g = model.mainGraph();
  auto pattern = makeInterpretedRule(rule.build());
  Rewriter rw(model, g, nullptr);
  const std::vector<NodeId> candidates = g.nodesOf(pattern->info().root);
  EXPECT_FALSE(candidates.empty());
  bool any_applied = false;
  auto round = [&] {
    for (NodeId root : candidates) {
      rw.beginAttempt(*pattern, root);
      any_applied |= pattern->matchAndRewrite(root, rw);
    }
  };
  round();
  round();
  const uint64_t before = g_allocations.load();
  for (int i = 0; i < attempts; ++i) round();
  const uint64_t made = g_allocations.load() - before;
  EXPECT_FALSE(any_applied);
  return made;
}

TEST(InterpAllocation, TheCounterSeesAnAllocation) {
  const uint64_t before = g_allocations.load();
  std::vector<std::string> names(
      static_cast<size_t>(::testing::UnitTest::GetInstance()->random_seed() + 3));
  names.back() = std::string(100, 'x');
  EXPECT_EQ(names.back().size(), 100u);
  EXPECT_GE(g_allocations.load() - before, 2u);
}

TEST(InterpAllocation, AFailedConstraintAllocatesNothing) {
  std::string text = torchOpset17();
  text.replace(text.find("eps = {1e-5}"), 12, "eps = {0.5}");
  EXPECT_EQ(allocationsOfFailedAttempts(text, layerNormRule(), 100), 0u);
}

TEST(InterpAllocation, AFailedAttributeAndAMovedInputAllocateNothing) {
  std::string text = opset18();
  text.replace(text.find("int64[1] two_axis = {2}"), 23, "int64[1] two_axis = {1}");
  EXPECT_EQ(allocationsOfFailedAttempts(text, layerNormRule(), 100), 0u);
}

TEST(InterpAllocation, FailedStructureAndShapeChecksAllocateNothing) {
  Rule r("shaped");
  r.root(r.op("Mul", {r.cap("x"), r.cap("w")}), "y");
  r.shape("x", {"_", "H"});
  r.shape("w", {"H"});
  Target t = r.rewrite();
  t.replace("y", t.op("Sub", {t.ref("x"), t.ref("w")}));
  EXPECT_EQ(allocationsOfFailedAttempts(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, K] x, float[M] w, float[N, K] z) => (float[N, K] y) {
  y = Mul(x, w)
}
)",
                                        r, 100),
            0u);
}

}  // namespace
}  // namespace onnx_rewrite
