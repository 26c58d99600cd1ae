//===- SourceTextTest.cc - locating the parts of TableGen values ----------===//
//
// The locator finds where each dag operator, argument, list element and
// template argument starts, skips what it does not model, and gives up (so the
// converter falls back to an enclosing location) on text it cannot read.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/SourceText.h"

#include <gtest/gtest.h>

#include <string>

namespace onnx_rewrite::tablegen {
namespace {

/// Offset of `node`'s head in `text`.
size_t at(const std::string& text, const TextNode& node) {
  return static_cast<size_t>(node.head - text.data());
}

TEST(SourceText, FindsDagOperatorsArgumentsAndNames) {
  std::string text = "match = [(Add:$y $x, (Mul $a, (f 2)), (axes (ints -1)))];";
  TextNode node;
  ASSERT_TRUE(parseFieldValue(text.data(), text.data() + text.size(), node));
  ASSERT_EQ(node.kind, TextNode::Kind::kList);
  ASSERT_EQ(node.items.size(), 1u);
  const TextNode& add = node.items[0];
  EXPECT_EQ(add.kind, TextNode::Kind::kDag);
  EXPECT_EQ(at(text, add), text.find("Add"));
  ASSERT_EQ(add.items.size(), 3u);
  EXPECT_EQ(add.items[0].kind, TextNode::Kind::kVariable);
  EXPECT_EQ(at(text, add.items[0]), text.find("$x"));
  EXPECT_EQ(at(text, add.items[1]), text.find("Mul"));
  EXPECT_EQ(at(text, add.items[1].items[1]), text.find("f 2"));
  EXPECT_EQ(at(text, add.items[2]), text.find("axes"));
}

TEST(SourceText, FindsClassTemplateArguments) {
  std::string text = "where = [Scalar<\"eps\", \"0\", \"1e-3\">, Rank<\"x\", [1, 2]>]";
  TextNode node;
  ASSERT_TRUE(parseFieldValue(text.data(), text.data() + text.size(), node));
  ASSERT_EQ(node.items.size(), 2u);
  EXPECT_EQ(node.items[0].kind, TextNode::Kind::kClassRef);
  EXPECT_EQ(at(text, node.items[1]), text.find("Rank"));
  ASSERT_EQ(node.items[1].items.size(), 2u);
  EXPECT_EQ(node.items[1].items[1].kind, TextNode::Kind::kList);
}

TEST(SourceText, SkipsCommentsStringsAndBangOperators) {
  std::string text =
      "match = [ // the root\n (Add /* a, b */ !cast<Op>(\"Neg\"), \"a,)\" # \"b\", $y)]";
  TextNode node;
  ASSERT_TRUE(parseFieldValue(text.data(), text.data() + text.size(), node));
  ASSERT_EQ(node.items.size(), 1u);
  const TextNode& dag = node.items[0];
  ASSERT_EQ(dag.items.size(), 3u);
  EXPECT_EQ(dag.items[0].kind, TextNode::Kind::kOther);  // a string with a paste
  EXPECT_EQ(at(text, dag.items[2]), text.find("$y"));
}

TEST(SourceText, ADagOperatorTakesASliceAsTableGenDoes) {
  // (axes [-1]) is the record axes sliced, with no arguments.
  std::string text = "(axes [-1])";
  TextNode node;
  ASSERT_TRUE(parseValue(text.data(), text.data() + text.size(), node));
  EXPECT_EQ(node.kind, TextNode::Kind::kDag);
  EXPECT_TRUE(node.items.empty());
}

TEST(SourceText, GivesUpOnTextItCannotRead) {
  for (std::string text : {"match = [(Add $x", "match [1]", "match = \"open", "match = (a b c)"}) {
    TextNode node;
    EXPECT_FALSE(parseFieldValue(text.data(), text.data() + text.size(), node)) << text;
  }
}

TEST(SourceText, NeverReadsPastTheEnd) {
  std::string text = "match = [(Add $x, $y)]";
  for (size_t n = 0; n < text.size(); ++n) {
    std::string cut = text.substr(0, n);  // its own buffer: reading past n is caught by ASan
    TextNode node;
    EXPECT_FALSE(parseFieldValue(cut.data(), cut.data() + cut.size(), node)) << cut;
  }
}

TEST(SourceText, DefNameStartSkipsTheKeyword) {
  std::string named = "def  LayerNorm : Rule<\"x\">";
  EXPECT_EQ(defNameStart(named.data(), named.data() + named.size()) - named.data(), 5);
  std::string anonymous = "def : OpDecl<...>";
  EXPECT_EQ(defNameStart(anonymous.data(), anonymous.data() + anonymous.size()), anonymous.data());
}

TEST(SourceText, FindsTheTemplateArgumentsOfADefsFirstParent) {
  // From the `def` keyword or from the name; the body's `{` is not a suffix of the class.
  std::string text = "def heads : Fragment<[\"t\"], [AttrParam<\"perm\", \"-1\">]> {\n}";
  for (size_t start : {size_t{0}, text.find("heads")}) {
    TextNode node;
    ASSERT_TRUE(parseDefParent(text.data() + start, text.data() + text.size(), node));
    EXPECT_EQ(node.kind, TextNode::Kind::kClassRef);
    EXPECT_EQ(at(text, node), text.find("Fragment"));
    ASSERT_EQ(node.items.size(), 2u);
    ASSERT_EQ(node.items[1].items.size(), 1u);
    EXPECT_EQ(at(text, node.items[1].items[0].items[1]), text.find("\"-1\""));
  }
  std::string anonymous = "def : Fragment<[\"t\"]>;";
  TextNode node;
  ASSERT_TRUE(parseDefParent(anonymous.data(), anonymous.data() + anonymous.size(), node));
  EXPECT_EQ(node.items.size(), 1u);
  std::string no_parent = "def centered;";
  EXPECT_FALSE(parseDefParent(no_parent.data(), no_parent.data() + no_parent.size(), node));
}

}  // namespace
}  // namespace onnx_rewrite::tablegen
