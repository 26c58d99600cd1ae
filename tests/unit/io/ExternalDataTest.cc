//===- ExternalDataTest.cc - weights outside the .onnx file --------------===//
//
// Tensors stored as external data stay external through load, rewrite and save:
// their bytes are never read unless a rule asks for one constant (and then only
// that tensor's bytes), saving next to the input keeps the references, and
// saving into another folder makes them valid there by linking the files. This
// holds for a model with more than 2 GiB of weights (a sparse file, so the test
// uses no disk). Bad references (missing or short files, locations outside the
// model's folder) are ModelErrors, and a save that would overwrite a different
// file of the data file's name fails without leaving anything behind.
//
//===----------------------------------------------------------------------===//
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/graph/ModelError.h"
#include "runtime/graph/TensorData.h"
#include "runtime/io/ExternalData.h"
#include "runtime/io/ModelFile.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::listFolder;
using testing::parseModel;
using testing::readFile;
using testing::serialize;
using testing::TempDir;
using testing::writeFile;
using testing::writeModel;

using Names = std::vector<std::string>;

// ---- Helpers ------------------------------------------------------------------------

/// Marks `tensor` as stored in `location` at `offset` (with `length` bytes, -1: none given).
void makeExternal(onnx::TensorProto& tensor, const std::string& location, uint64_t offset,
                  int64_t length) {
  tensor.clear_float_data();
  tensor.clear_raw_data();
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    onnx::StringStringEntryProto& e = *tensor.add_external_data();
    e.set_key(key);
    e.set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

onnx::TensorProto externalFloats(const std::string& name, std::vector<int64_t> dims,
                                 const std::string& location, uint64_t offset) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    count *= d;
  }
  makeExternal(t, location, offset, count * 4);
  return t;
}

std::string floatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

/// weights.bin: w (float[4]) at 0, s (scalar 2.0) at 16, k (float[4], a Constant) at 20.
/// extra/w2.bin: w2 (float[4]) at 0, in a sub-folder.
const std::vector<float> kW = {1, 2, 3, 4};
const float kS = 2.0f;
const std::vector<float> kK = {5, 6, 7, 8};
const std::vector<float> kW2 = {9, 10, 11, 12};

onnx::ModelProto externalModel() {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    ext (float[4] x) => (float[4] y)
    {
      a = Add (x, w)
      b = Mul (a, s)
      c = Relu (b)
      k = Constant <value = float[4] {0.0, 0.0, 0.0, 0.0}> ()
      d = Add (c, k)
      y = Add (d, w2)
    }
  )");
  onnx::GraphProto& g = *model.mutable_graph();
  *g.add_initializer() = externalFloats("w", {4}, "weights.bin", 0);
  *g.add_initializer() = externalFloats("s", {}, "weights.bin", 16);
  *g.add_initializer() = externalFloats("w2", {4}, "extra/w2.bin", 0);
  onnx::TensorProto& k = *g.mutable_node(3)->mutable_attribute(0)->mutable_t();
  makeExternal(k, "weights.bin", 20, 16);
  return model;
}

/// Writes externalModel() and its data files into `dir`; returns the model's path.
std::string writeExternalModel(const std::string& dir) {
  writeFile(dir + "/weights.bin", floatBytes(kW) + floatBytes({kS}) + floatBytes(kK));
  ::mkdir((dir + "/extra").c_str(), 0755);
  writeFile(dir + "/extra/w2.bin", floatBytes(kW2));
  const std::string path = dir + "/model.onnx";
  writeModel(path, externalModel());
  return path;
}

OpId op(const char* type) { return OpId::get("", type); }

RuleSet reluToSigmoid() {
  RuleSet rules;
  rules.add(testing::makeRenameRule("relu_to_sigmoid", op("Relu"), op("Sigmoid")));
  return rules;
}

/// load + rewrite + save, the way the CLI runs: returns the rewrite's result.
Result loadRewriteSave(const std::string& in, const std::string& out, const RuleSet& rules) {
  onnx::ModelProto model;
  loadModelFile(in, model);
  Options options;
  options.base_dir = folderOf(in);
  Result result = rewrite(model, rules, options);
  saveModelFile(model, out, folderOf(in));
  return result;
}

/// The model at `path` loads (so every external reference is a relative path to a file next
/// to it that is long enough) and all four of its tensors are still external.
void expectReferencesValid(const std::string& path) {
  onnx::ModelProto model;
  ASSERT_NO_THROW(loadModelFile(path, model)) << path;
  int external = 0;
  forEachTensor(model, [&](onnx::TensorProto& t) {
    if (!isExternal(t)) return;
    ++external;
    ExternalRef ref = externalRef(t);
    EXPECT_NE(ref.location.front(), '/') << ref.location;
    struct stat st {};
    EXPECT_EQ(::stat((folderOf(path) + "/" + ref.location).c_str(), &st), 0)
        << ref.location << " next to " << path;
  });
  EXPECT_EQ(external, 4) << "every tensor stays external";
}

std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelError";
  return {};
}

// ---- Relocation -----------------------------------------------------------------------

TEST(ExternalData, SaveIntoTheSameFolderKeepsTheReferences) {
  TempDir dir;
  const std::string in = writeExternalModel(dir.path());
  const std::string weights = readFile(dir.file("weights.bin"));
  Result result = loadRewriteSave(in, dir.file("out.onnx"), reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(result.external_bytes_read, 0u);
  EXPECT_EQ(listFolder(dir.path()), (Names{"extra", "model.onnx", "out.onnx", "weights.bin"}));
  EXPECT_EQ(listFolder(dir.file("extra")), Names{"w2.bin"});
  EXPECT_EQ(readFile(dir.file("weights.bin")), weights);
  expectReferencesValid(dir.file("out.onnx"));
}

TEST(ExternalData, SaveIntoAnotherFolderMakesTheDataAvailableThere) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  Result result = loadRewriteSave(in, other.file("out.onnx"), reluToSigmoid());
  EXPECT_EQ(result.external_bytes_read, 0u);
  EXPECT_EQ(listFolder(other.path()), (Names{"extra", "out.onnx", "weights.bin"}));
  EXPECT_EQ(readFile(other.file("weights.bin")), readFile(dir.file("weights.bin")));
  EXPECT_EQ(readFile(other.file("extra/w2.bin")), readFile(dir.file("extra/w2.bin")));
  expectReferencesValid(other.file("out.onnx"));
  // The input folder is untouched.
  EXPECT_EQ(listFolder(dir.path()), (Names{"extra", "model.onnx", "weights.bin"}));
}

TEST(ExternalData, SavedReferencesAreTheOnesLoaded) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  loadRewriteSave(in, other.file("out.onnx"), reluToSigmoid());
  onnx::ModelProto saved;
  loadModelFile(other.file("out.onnx"), saved);
  ASSERT_EQ(saved.graph().initializer_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const onnx::TensorProto& t = saved.graph().initializer(i);
    onnx::TensorProto expected = externalModel().graph().initializer(i);
    EXPECT_EQ(t.SerializeAsString(), expected.SerializeAsString()) << t.name();
  }
}

TEST(ExternalData, SavingTwiceIntoTheSameOtherFolderSucceeds) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  loadRewriteSave(in, other.file("out.onnx"), reluToSigmoid());
  EXPECT_NO_THROW(loadRewriteSave(in, other.file("out2.onnx"), reluToSigmoid()));
  expectReferencesValid(other.file("out2.onnx"));
}

TEST(ExternalData, TensorsInSubgraphsAndFunctionsAreRelocatedToo) {
  TempDir dir, other;
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16, "local" : 1]>
    nested (float[4] x, bool c) => (float[4] y)
    {
      a = local.AddConst (x)
      y = If (c) <
        then_branch = then_g () => (float[4] t_out) {
          kb = Constant <value = float[4] {0.0, 0.0, 0.0, 0.0}> ()
          t_out = Add (a, kb)
        },
        else_branch = else_g () => (float[4] e_out) { e_out = Relu (a) }
      >
    }
    <domain: "local", opset_import: ["" : 16]>
    AddConst (p) => (q)
    {
      kf = Constant <value = float[4] {0.0, 0.0, 0.0, 0.0}> ()
      q = Add (p, kf)
    }
  )");
  onnx::AttributeProto& then_branch = *model.mutable_graph()->mutable_node(1)->mutable_attribute(0);
  makeExternal(*then_branch.mutable_g()->mutable_node(0)->mutable_attribute(0)->mutable_t(),
               "branch.bin", 0, 16);
  makeExternal(*model.mutable_functions(0)->mutable_node(0)->mutable_attribute(0)->mutable_t(),
               "function.bin", 0, 16);
  writeFile(dir.file("branch.bin"), floatBytes(kW));
  writeFile(dir.file("function.bin"), floatBytes(kK));
  writeModel(dir.file("model.onnx"), model);
  Result result = loadRewriteSave(dir.file("model.onnx"), other.file("out.onnx"), reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(listFolder(other.path()), (Names{"branch.bin", "function.bin", "out.onnx"}));
  EXPECT_EQ(readFile(other.file("branch.bin")), floatBytes(kW));
  EXPECT_EQ(readFile(other.file("function.bin")), floatBytes(kK));
  onnx::ModelProto saved;
  EXPECT_NO_THROW(loadModelFile(other.file("out.onnx"), saved));
}

TEST(ExternalData, DataFileThatIsARelativeSymlinkStaysValidInAnotherFolder) {
  // The Hugging Face cache layout: snapshots/<rev>/weights.bin -> ../../blobs/<hash>, and
  // the model file too. The data lies outside the model's folder as named, but inside the
  // folder the model file really lies in, so it is the model's own.
  TempDir cache, other;
  const std::string blobs = cache.file("blobs"), snapshot = cache.file("snapshots");
  ASSERT_EQ(::mkdir(blobs.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(snapshot.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((snapshot + "/rev").c_str(), 0755), 0);
  const std::string in = writeExternalModel(snapshot + "/rev");
  ASSERT_EQ(::rename((snapshot + "/rev/weights.bin").c_str(), (blobs + "/1234abcd").c_str()), 0);
  ASSERT_EQ(::symlink("../../blobs/1234abcd", (snapshot + "/rev/weights.bin").c_str()), 0);
  ASSERT_EQ(::rename(in.c_str(), (blobs + "/5678ef90").c_str()), 0);
  ASSERT_EQ(::symlink("../../blobs/5678ef90", in.c_str()), 0);
  Result result = loadRewriteSave(in, other.file("out.onnx"), reluToSigmoid());
  EXPECT_EQ(result.external_bytes_read, 0u);
  expectReferencesValid(other.file("out.onnx"));
  if (::testing::Test::HasFailure()) return;  // readFile would throw on a dangling link
  EXPECT_EQ(readFile(other.file("weights.bin")), readFile(blobs + "/1234abcd"));
}

/// A scratch folder on the tmpfs at /dev/shm (another file system than $TMPDIR usually).
class ShmDir {
 public:
  ShmDir() {
    char pattern[] = "/dev/shm/onnx-rewrite-test-XXXXXX";
    if (::mkdtemp(pattern)) path_ = pattern;
  }
  ~ShmDir() {
    if (!path_.empty()) testing::runCommand("rm -rf " + testing::shellQuote(path_));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ExternalData, SaveOntoAnotherFileSystemStillMakesTheDataAvailable) {
  TempDir dir;
  ShmDir shm;
  struct stat a {
  }, b{};
  if (shm.path().empty() || ::stat(dir.path().c_str(), &a) != 0 ||
      ::stat(shm.path().c_str(), &b) != 0 || a.st_dev == b.st_dev)
    GTEST_SKIP() << "needs /dev/shm on a different file system than " << dir.path();
  const std::string in = writeExternalModel(dir.path());
  Result result = loadRewriteSave(in, shm.path() + "/out.onnx", reluToSigmoid());
  EXPECT_EQ(result.external_bytes_read, 0u);
  expectReferencesValid(shm.path() + "/out.onnx");
  EXPECT_EQ(readFile(shm.path() + "/weights.bin"), readFile(dir.file("weights.bin")));
  EXPECT_EQ(readFile(shm.path() + "/extra/w2.bin"), readFile(dir.file("extra/w2.bin")));
}

// ---- Weights are never read -----------------------------------------------------------

TEST(ExternalData, WeightsAreNeverReadByARuleThatReadsNoConstant) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  // Garbage of the same size: anything that interpreted the weights would notice.
  const std::string garbage(readFile(dir.file("weights.bin")).size(), '\xff');
  writeFile(dir.file("weights.bin"), garbage);
  writeFile(dir.file("extra/w2.bin"), std::string(16, '\xff'));
  Result result = loadRewriteSave(in, other.file("out.onnx"), reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(result.external_bytes_read, 0u);
  expectReferencesValid(other.file("out.onnx"));
  EXPECT_EQ(readFile(other.file("weights.bin")), garbage);
}

TEST(ExternalData, RuleReadingOneConstantReadsOnlyThatTensor) {
  TempDir dir;
  const std::string in = writeExternalModel(dir.path());
  // Only the 4 bytes of `s` are real; everything around them is garbage.
  writeFile(dir.file("weights.bin"),
            std::string(16, '\xff') + floatBytes({kS}) + std::string(16, '\xff'));
  RuleSet rules;
  rules.add(testing::makeMulByConstantRule("mul_by_two", 2.0));
  Result result = loadRewriteSave(in, dir.file("out.onnx"), rules);
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(result.external_bytes_read, 4u);
  onnx::ModelProto saved;
  loadModelFile(dir.file("out.onnx"), saved);
  EXPECT_EQ(testing::opTypes(saved),
            (std::vector<std::string>{"Add", "Identity", "Relu", "Constant", "Add", "Add"}));
}

/// A float tensor of `n` elements stored in `location` at `offset`.
onnx::TensorProto externalFloats(const std::string& location, uint64_t offset, int n) {
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(n);
  makeExternal(t, location, offset, -1);
  return t;
}

TEST(ExternalData, ReadsKeepTheDataFileOpenForTheNextRead) {
  // Rules read many small tensors from the one file an exporter wrote: it is opened once.
  TempDir dir;
  writeFile(dir.file("w.bin"), floatBytes({1, 2, 3, 4}));
  ExternalFiles files;
  uint64_t read = 0;
  EXPECT_EQ(readTensor(externalFloats("w.bin", 0, 2), dir.path(), 64, &read, &files).bytes,
            floatBytes({1, 2}));
  // Gone from the folder, still open: the next read of that file needs no open.
  ASSERT_EQ(::unlink(dir.file("w.bin").c_str()), 0);
  EXPECT_EQ(readTensor(externalFloats("w.bin", 8, 2), dir.path(), 64, &read, &files).bytes,
            floatBytes({3, 4}));
  EXPECT_EQ(read, 16u);
  // Without the cache each read opens the file itself.
  EXPECT_THROW(readTensor(externalFloats("w.bin", 8, 2), dir.path(), 64), ModelError);
}

TEST(ExternalData, ReadsOfMoreFilesThanKeptOpenStillSucceed) {
  // One file per tensor (some exporters): beyond kMaxOpen files each read opens its own.
  TempDir dir;
  ExternalFiles files;
  const int count = static_cast<int>(ExternalFiles::kMaxOpen) + 3;
  for (int i = 0; i < count; ++i)
    writeFile(dir.file("w" + std::to_string(i)), floatBytes({static_cast<float>(i)}));
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < count; ++i)
      EXPECT_EQ(
          readTensor(externalFloats("w" + std::to_string(i), 0, 1), dir.path(), 64, nullptr, &files)
              .bytes,
          floatBytes({static_cast<float>(i)}));
}

TEST(ExternalData, ModelWithMoreThanTwoGibibytesOfWeightsIsRewrittenWithoutReadingThem) {
  TempDir dir, other;
  // 805306368 floats = 3 GiB in a sparse file (ftruncate allocates no blocks), then a
  // small tensor after it.
  const int64_t huge_count = 805306368;
  const uint64_t huge_bytes = static_cast<uint64_t>(huge_count) * 4;
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    big (float[805306368] x, float[4] x2) => (float[805306368] y, float[4] y2)
    {
      a = Mul (x, huge)
      y = Relu (a)
      b = Mul (x2, small)
      y2 = Relu (b)
    }
  )");
  *model.mutable_graph()->add_initializer() = externalFloats("huge", {huge_count}, "big.bin", 0);
  *model.mutable_graph()->add_initializer() = externalFloats("small", {4}, "big.bin", huge_bytes);
  const std::string data = dir.file("big.bin");
  {
    int fd = ::open(data.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(huge_bytes)), 0);
    const std::string small = floatBytes(kW);
    ASSERT_EQ(::pwrite(fd, small.data(), small.size(), static_cast<off_t>(huge_bytes)),
              static_cast<ssize_t>(small.size()));
    ::close(fd);
  }
  struct stat before {};
  ASSERT_EQ(::stat(data.c_str(), &before), 0);
  ASSERT_EQ(static_cast<uint64_t>(before.st_size), huge_bytes + 16);
  writeModel(dir.file("model.onnx"), model);

  // The Mul rule looks at both tensors but reads neither: they are not scalars.
  RuleSet rules = reluToSigmoid();
  rules.add(testing::makeMulByConstantRule("mul_by_two", 2.0));
  Result result = loadRewriteSave(dir.file("model.onnx"), other.file("out.onnx"), rules);
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(result.external_bytes_read, 0u);
  EXPECT_EQ(listFolder(other.path()), (Names{"big.bin", "out.onnx"}));
  struct stat after {};
  ASSERT_EQ(::stat(other.file("big.bin").c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  // Still sparse: nothing copied or written the 3 GiB.
  EXPECT_LE(after.st_blocks, before.st_blocks + 8);
  onnx::ModelProto saved;
  ASSERT_NO_THROW(loadModelFile(other.file("out.onnx"), saved));
  EXPECT_EQ(testing::opTypes(saved),
            (std::vector<std::string>{"Mul", "Sigmoid", "Mul", "Sigmoid"}));
  ASSERT_EQ(saved.graph().initializer_size(), 2);
  EXPECT_EQ(externalRef(saved.graph().initializer(1)).offset, huge_bytes);
}

// ---- Bad references -------------------------------------------------------------------

TEST(ExternalData, MissingDataFileIsAModelErrorNamingTheFile) {
  TempDir dir;
  const std::string in = writeExternalModel(dir.path());
  ASSERT_EQ(::unlink(dir.file("extra/w2.bin").c_str()), 0);
  onnx::ModelProto model;
  std::string message = errorOf([&] { loadModelFile(in, model); });
  EXPECT_NE(message.find(in), std::string::npos) << message;
  EXPECT_NE(message.find("extra/w2.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("w2"), std::string::npos) << message;
}

TEST(ExternalData, TooShortDataFileIsAModelError) {
  TempDir dir;
  const std::string in = writeExternalModel(dir.path());
  // `k` needs bytes 20..36; the file now ends at 30.
  writeFile(dir.file("weights.bin"), readFile(dir.file("weights.bin")).substr(0, 30));
  onnx::ModelProto model;
  std::string message = errorOf([&] { loadModelFile(in, model); });
  EXPECT_NE(message.find("weights.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("too short"), std::string::npos) << message;
}

TEST(ExternalData, TooShortDataFileWithoutLengthIsAModelError) {
  // Without a "length" entry the size follows from the shape.
  TempDir dir;
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    no_length (float[4] x) => (float[4] y)
    {
      y = Add (x, w)
    }
  )");
  onnx::TensorProto& w = *model.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(4);
  makeExternal(w, "weights.bin", 0, -1);
  writeFile(dir.file("weights.bin"), std::string(12, '\0'));  // w needs 16
  writeModel(dir.file("model.onnx"), model);
  onnx::ModelProto loaded;
  std::string message = errorOf([&] { loadModelFile(dir.file("model.onnx"), loaded); });
  EXPECT_NE(message.find("too short"), std::string::npos) << message;
  writeFile(dir.file("weights.bin"), std::string(16, '\0'));
  EXPECT_NO_THROW(loadModelFile(dir.file("model.onnx"), loaded));
}

TEST(ExternalData, LocationsOutsideTheModelFolderAreModelErrors) {
  TempDir outer;
  const std::string dir = outer.file("models");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  writeExternalModel(dir);
  // The files these locations name all exist: the location itself is the problem.
  writeFile(outer.file("secret.bin"), std::string(64, 'x'));
  const std::vector<std::string> locations = {"../secret.bin", outer.file("secret.bin"),
                                              "extra/../../secret.bin", ".."};
  for (const std::string& location : locations) {
    onnx::ModelProto model = externalModel();
    onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
    w.clear_external_data();
    makeExternal(w, location, 0, 16);
    writeModel(dir + "/bad.onnx", model);
    onnx::ModelProto loaded;
    std::string message = errorOf([&] { loadModelFile(dir + "/bad.onnx", loaded); });
    EXPECT_NE(message.find("outside the model's folder"), std::string::npos)
        << location << ": " << message;
  }
}

TEST(ExternalData, OffsetsThatWrapAroundAreModelErrors) {
  // offset + length overflows 64 bits to a small number; "-16" is not an offset at all.
  TempDir dir;
  writeExternalModel(dir.path());
  for (const std::string offset : {"18446744073709551608", "-16", "-1"}) {
    onnx::ModelProto model = externalModel();
    onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
    w.mutable_external_data(1)->set_value(offset);
    writeModel(dir.file("bad.onnx"), model);
    onnx::ModelProto loaded;
    EXPECT_THROW(loadModelFile(dir.file("bad.onnx"), loaded), ModelError) << "offset " << offset;
  }
}

TEST(ExternalData, LocationNamingAFolderIsAModelError) {
  TempDir dir;
  writeExternalModel(dir.path());
  onnx::ModelProto model = externalModel();
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  w.mutable_external_data(0)->set_value("extra");
  writeModel(dir.file("bad.onnx"), model);
  onnx::ModelProto loaded;
  std::string message = errorOf([&] { loadModelFile(dir.file("bad.onnx"), loaded); });
  EXPECT_NE(message.find("extra"), std::string::npos) << message;
}

TEST(ExternalData, ExternalTensorWithoutLocationIsAModelError) {
  TempDir dir;
  writeExternalModel(dir.path());
  onnx::ModelProto model = externalModel();
  model.mutable_graph()->mutable_initializer(0)->clear_external_data();
  writeModel(dir.file("bad.onnx"), model);
  onnx::ModelProto loaded;
  std::string message = errorOf([&] { loadModelFile(dir.file("bad.onnx"), loaded); });
  EXPECT_NE(message.find("'w'"), std::string::npos) << message;
}

TEST(ExternalData, MalformedOffsetIsAModelError) {
  TempDir dir;
  writeExternalModel(dir.path());
  onnx::ModelProto model = externalModel();
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  w.mutable_external_data(1)->set_value("sixteen");
  writeModel(dir.file("bad.onnx"), model);
  onnx::ModelProto loaded;
  std::string message = errorOf([&] { loadModelFile(dir.file("bad.onnx"), loaded); });
  EXPECT_NE(message.find("sixteen"), std::string::npos) << message;
}

TEST(ExternalData, DataFileSymlinkedOutOfTheModelFolderIsRefusedNamingIt) {
  // The location's text stays inside; the symlink does not. Accepted, it would be linked
  // next to the output: a way to copy any readable file into someone's folder.
  TempDir dir, outside, other;
  const std::string in = writeExternalModel(dir.path());
  ASSERT_EQ(::rename(dir.file("weights.bin").c_str(), outside.file("weights.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.file("weights.bin").c_str(), dir.file("weights.bin").c_str()), 0);
  onnx::ModelProto model;
  EXPECT_EQ(errorOf([&] { loadModelFile(in, model); }),
            in + ": external data file '" + dir.file("weights.bin") +
                "' of tensor 'w' resolves (through a symlink) to a file outside the model's "
                "folder");
}

TEST(ExternalData, DataFileInASymlinkedSubFolderOutsideIsRefused) {
  TempDir dir, outside;
  const std::string in = writeExternalModel(dir.path());
  ASSERT_EQ(::rename(dir.file("extra").c_str(), outside.file("extra").c_str()), 0);
  ASSERT_EQ(::symlink(outside.file("extra").c_str(), dir.file("extra").c_str()), 0);
  onnx::ModelProto model;
  EXPECT_NE(errorOf([&] { loadModelFile(in, model); }).find("outside the model's folder"),
            std::string::npos);
}

TEST(ExternalData, ADeviceAsDataFileIsRefusedNotRead) {
  TempDir dir;
  const std::string in = writeExternalModel(dir.path());
  ASSERT_EQ(::unlink(dir.file("weights.bin").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", dir.file("weights.bin").c_str()), 0);
  onnx::ModelProto model;
  EXPECT_EQ(errorOf([&] { loadModelFile(in, model); }),
            in + ": external data file '" + dir.file("weights.bin") +
                "' of tensor 'w': is not a regular file (a device, FIFO or socket)");
}

// ---- Saving must not clobber other files -----------------------------------------------

TEST(ExternalData, SaveRefusesToOverwriteADifferentFileOfTheDataFileName) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  writeFile(other.file("weights.bin"), "someone else's weights");
  onnx::ModelProto model;
  loadModelFile(in, model);
  std::string message = errorOf([&] { saveModelFile(model, other.file("out.onnx"), dir.path()); });
  EXPECT_NE(message.find(other.file("out.onnx")), std::string::npos) << message;
  EXPECT_NE(message.find("weights.bin"), std::string::npos) << message;
  EXPECT_EQ(listFolder(other.path()), Names{"weights.bin"});
  EXPECT_EQ(readFile(other.file("weights.bin")), "someone else's weights");
}

TEST(ExternalData, FailedSaveRemovesTheLinksItAlreadyMade) {
  // weights.bin is linked first; the conflict on extra/w2.bin comes second.
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  ASSERT_EQ(::mkdir(other.file("extra").c_str(), 0755), 0);
  writeFile(other.file("extra/w2.bin"), "different");
  onnx::ModelProto model;
  loadModelFile(in, model);
  EXPECT_THROW(saveModelFile(model, other.file("out.onnx"), dir.path()), ModelError);
  EXPECT_EQ(listFolder(other.path()), Names{"extra"});
  EXPECT_EQ(listFolder(other.file("extra")), Names{"w2.bin"});
  EXPECT_EQ(readFile(other.file("extra/w2.bin")), "different");
}

TEST(ExternalData, FailedSaveRemovesTheFoldersItMade) {
  // With w2 (extra/w2.bin) listed first, extra/ is created and linked into before the
  // conflict on weights.bin is found; both must go again.
  TempDir dir, other;
  onnx::ModelProto model = externalModel();
  model.mutable_graph()->mutable_initializer()->SwapElements(0, 2);
  writeExternalModel(dir.path());
  writeModel(dir.file("model.onnx"), model);
  writeFile(other.file("weights.bin"), "someone else's weights");
  onnx::ModelProto loaded;
  loadModelFile(dir.file("model.onnx"), loaded);
  EXPECT_THROW(saveModelFile(loaded, other.file("out.onnx"), dir.path()), ModelError);
  EXPECT_EQ(listFolder(other.path()), Names{"weights.bin"});
}

TEST(ExternalData, FailedSaveKeepsAnExistingOutputModel) {
  TempDir dir, other;
  const std::string in = writeExternalModel(dir.path());
  writeFile(other.file("weights.bin"), "someone else's weights");
  writeFile(other.file("out.onnx"), "previous output");
  onnx::ModelProto model;
  loadModelFile(in, model);
  EXPECT_THROW(saveModelFile(model, other.file("out.onnx"), dir.path()), ModelError);
  EXPECT_EQ(readFile(other.file("out.onnx")), "previous output");
  EXPECT_EQ(listFolder(other.path()), (Names{"out.onnx", "weights.bin"}));
}

}  // namespace
}  // namespace onnx_rewrite
