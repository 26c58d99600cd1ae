//===- ModelFileTest.cc - loading and saving .onnx files -----------------===//
//
// loadModelFile turns every way a file can fail to be an ONNX model (missing,
// a folder, not a protobuf, truncated, empty, a protobuf without graph or
// opsets) into a ModelError whose message starts with the file's path.
// saveModelFile writes a temporary file next to the output and renames it into
// place: a successful save leaves exactly the output file, and a failed one
// (missing or unwritable folder, output path naming a folder) leaves nothing,
// not even a temporary file.
//
//===----------------------------------------------------------------------===//
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/graph/ModelError.h"
#include "runtime/io/ModelFile.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::listFolder;
using testing::parseModel;
using testing::serialize;
using testing::TempDir;
using testing::writeFile;

using Names = std::vector<std::string>;

onnx::ModelProto smallModel() {
  return parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16], producer_name: "model-file-test">
    small (float[N, 4] x) => (float[N, 4] y)
    <float[4] bias = {1.0, 2.0, 3.0, 4.0}>
    {
      a = Add (x, bias)
      y = Relu (a)
    }
  )");
}

/// The message of the ModelError `load` throws for `path` (fails the test if none).
std::string loadError(const std::string& path) {
  onnx::ModelProto model;
  try {
    loadModelFile(path, model);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loading " << path << " did not throw a ModelError";
  return {};
}

/// The message of the ModelError saving `model` to `path` throws (fails the test if none).
std::string saveError(onnx::ModelProto model, const std::string& path,
                      const std::string& source_folder) {
  try {
    saveModelFile(model, path, source_folder);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "saving " << path << " did not throw a ModelError";
  return {};
}

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// ---- Loading --------------------------------------------------------------------------

TEST(LoadModelFile, ReadsWhatSaveModelFileWrote) {
  TempDir dir;
  onnx::ModelProto model = smallModel();
  saveModelFile(model, dir.file("model.onnx"), dir.path());
  onnx::ModelProto loaded;
  loadModelFile(dir.file("model.onnx"), loaded);
  EXPECT_EQ(serialize(loaded), serialize(smallModel()));
}

TEST(LoadModelFile, MissingFileIsAModelErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.file("missing.onnx");
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST(LoadModelFile, FolderIsAModelError) {
  TempDir dir;
  std::string message = loadError(dir.path());
  EXPECT_TRUE(startsWith(message, dir.path() + ": ")) << message;
  EXPECT_NE(message.find("folder"), std::string::npos) << message;
}

TEST(LoadModelFile, TextFileIsAModelError) {
  TempDir dir;
  const std::string path = dir.file("notes.onnx");
  writeFile(path, "This is not an ONNX model, just some text.\nSecond line.\n");
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("not an ONNX model"), std::string::npos) << message;
}

TEST(LoadModelFile, TruncatedModelIsAModelError) {
  TempDir dir;
  const std::string bytes = serialize(smallModel());
  const std::string path = dir.file("half.onnx");
  writeFile(path, bytes.substr(0, bytes.size() / 2));
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("not an ONNX model"), std::string::npos) << message;
}

TEST(LoadModelFile, ModelCutAtAnyByteIsAModelError) {
  // Wherever a download stopped, the result must not load as a (smaller) model.
  TempDir dir;
  const std::string bytes = serialize(smallModel());
  const std::string path = dir.file("cut.onnx");
  for (size_t length = 0; length < bytes.size(); ++length) {
    writeFile(path, bytes.substr(0, length));
    onnx::ModelProto model;
    EXPECT_THROW(loadModelFile(path, model), ModelError) << "cut after " << length << " bytes";
  }
}

TEST(LoadModelFile, EmptyFileIsAModelError) {
  TempDir dir;
  const std::string path = dir.file("empty.onnx");
  writeFile(path, "");
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("not an ONNX model"), std::string::npos) << message;
}

TEST(LoadModelFile, ProtobufWithoutGraphIsAModelError) {
  TempDir dir;
  onnx::ModelProto model = smallModel();
  model.clear_graph();
  const std::string path = dir.file("no_graph.onnx");
  testing::writeModel(path, model);
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("graph"), std::string::npos) << message;
}

TEST(LoadModelFile, ProtobufWithoutOpsetImportIsAModelError) {
  TempDir dir;
  onnx::ModelProto model = smallModel();
  model.clear_opset_import();
  const std::string path = dir.file("no_opset.onnx");
  testing::writeModel(path, model);
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("opset"), std::string::npos) << message;
}

TEST(LoadModelFile, AnotherProtobufMessageIsAModelError) {
  TempDir dir;
  onnx::TensorProto tensor;
  tensor.set_name("not_a_model");
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(2);
  tensor.add_float_data(1.0f);
  tensor.add_float_data(2.0f);
  const std::string path = dir.file("tensor.pb");
  writeFile(path, tensor.SerializeAsString());
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
}

TEST(LoadModelFile, FileLargerThanTwoGibibytesIsAModelError) {
  // protobuf cannot parse it; the message must say to use external data. A sparse file,
  // so no disk is used and nothing is read.
  TempDir dir;
  const std::string path = dir.file("huge.onnx");
  writeFile(path, serialize(smallModel()));
  ASSERT_EQ(::truncate(path.c_str(), (off_t{1} << 31) + 1), 0);
  std::string message = loadError(path);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("external data"), std::string::npos) << message;
}

TEST(LoadModelFile, FailedLoadDoesNotTouchTheFile) {
  TempDir dir;
  const std::string path = dir.file("notes.onnx");
  const std::string text = "not a model";
  writeFile(path, text);
  loadError(path);
  EXPECT_EQ(testing::readFile(path), text);
  EXPECT_EQ(listFolder(dir.path()), Names{"notes.onnx"});
}

// ---- Saving ---------------------------------------------------------------------------

TEST(SaveModelFile, SuccessfulSaveLeavesOnlyTheOutputFile) {
  TempDir dir;
  onnx::ModelProto model = smallModel();
  saveModelFile(model, dir.file("out.onnx"), dir.path());
  EXPECT_EQ(listFolder(dir.path()), Names{"out.onnx"});
  EXPECT_EQ(testing::readFile(dir.file("out.onnx")), serialize(smallModel()));
}

TEST(SaveModelFile, ReplacesAnExistingOutputByRenameNotInPlace) {
  // A reader holding the old file (here: a hard link to it) still sees the old model,
  // which is what an atomic rename gives and an in-place rewrite would not.
  TempDir dir;
  const std::string out = dir.file("out.onnx");
  writeFile(out, "old contents");
  ASSERT_EQ(::link(out.c_str(), dir.file("reader.onnx").c_str()), 0);
  onnx::ModelProto model = smallModel();
  saveModelFile(model, out, dir.path());
  EXPECT_EQ(testing::readFile(out), serialize(smallModel()));
  EXPECT_EQ(testing::readFile(dir.file("reader.onnx")), "old contents");
  EXPECT_EQ(listFolder(dir.path()), (Names{"out.onnx", "reader.onnx"}));
}

TEST(SaveModelFile, BareFileNameIsSavedInTheCurrentFolder) {
  TempDir dir;
  char previous[4096];
  ASSERT_NE(::getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  onnx::ModelProto model = smallModel();
  EXPECT_NO_THROW(saveModelFile(model, "out.onnx", "."));
  ASSERT_EQ(::chdir(previous), 0);
  EXPECT_EQ(listFolder(dir.path()), Names{"out.onnx"});
}

TEST(SaveModelFile, MissingOutputFolderIsAModelErrorAndCreatesNothing) {
  TempDir dir;
  const std::string path = dir.file("missing/out.onnx");
  std::string message = saveError(smallModel(), path, dir.path());
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("missing"), std::string::npos) << message;
  EXPECT_EQ(listFolder(dir.path()), Names{});
}

TEST(SaveModelFile, OutputFolderThatIsAFileIsAModelError) {
  TempDir dir;
  writeFile(dir.file("plain"), "a file");
  const std::string path = dir.file("plain/out.onnx");
  std::string message = saveError(smallModel(), path, dir.path());
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_EQ(listFolder(dir.path()), Names{"plain"});
}

TEST(SaveModelFile, OutputPathThatIsAFolderIsAModelErrorAndLeavesNoTemporaryFile) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.file("out.onnx").c_str(), 0755), 0);
  const std::string path = dir.file("out.onnx");
  std::string message = saveError(smallModel(), path, dir.path());
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_EQ(listFolder(dir.path()), Names{"out.onnx"});
  EXPECT_EQ(listFolder(path), Names{});
}

TEST(SaveModelFile, UnwritableOutputFolderIsAModelErrorAndLeavesNothing) {
  TempDir dir;
  const std::string folder = dir.file("locked");
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  if (::access(folder.c_str(), W_OK) == 0) {
    ::chmod(folder.c_str(), 0755);
    GTEST_SKIP() << "running with privileges that ignore folder permissions (root?): a 0555 "
                    "folder is still writable, so this failure cannot be provoked; see "
                    "OutputFolderOnReadOnlyFileSystemIsAModelError";
  }
  const std::string path = folder + "/out.onnx";
  std::string message = saveError(smallModel(), path, dir.path());
  ::chmod(folder.c_str(), 0755);
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_NE(message.find("cannot write"), std::string::npos) << message;
  EXPECT_EQ(listFolder(folder), Names{});
}

TEST(SaveModelFile, OutputFolderOnReadOnlyFileSystemIsAModelError) {
  // /proc refuses new files even to root, so this runs where chmod cannot help.
  struct stat st {};
  if (::stat("/proc/self", &st) != 0) GTEST_SKIP() << "no /proc file system here";
  const std::string path = "/proc/self/out.onnx";
  std::string message = saveError(smallModel(), path, "/proc/self");
  EXPECT_TRUE(startsWith(message, path + ": ")) << message;
  EXPECT_EQ(::access(path.c_str(), F_OK), -1);
  for (const std::string& name : listFolder("/proc/self"))
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
}

TEST(SaveModelFile, SaveDoesNotChangeTheModel) {
  TempDir dir;
  onnx::ModelProto model = smallModel();
  saveModelFile(model, dir.file("out.onnx"), dir.path());
  EXPECT_EQ(serialize(model), serialize(smallModel()));
}

}  // namespace
}  // namespace onnx_rewrite
