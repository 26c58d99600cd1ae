//===- ModelFile.cc - loading and saving .onnx files ---------------------===//
#include "runtime/io/ModelFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/io/ExternalData.h"
#include "runtime/io/ModelValidation.h"
#include "runtime/io/RegularFile.h"

namespace onnx_rewrite {
namespace {

std::string errnoText() { return std::strerror(errno); }

/// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

/// protobuf's default recursion limit, kept: deeper models are refused with a message.
constexpr int kProtobufNesting = 100;
/// Room for the second parse that only tells "too deep" from "not a model"; small enough
/// for the stack of a sanitizer build.
constexpr int kProbeNesting = 1000;

/// Parses the whole of `fd` into `model` with at most `nesting` levels of messages.
bool parseNested(int fd, int nesting, onnx::ModelProto& model) {
  // Reads of 1 MiB, not protobuf's 8 KiB: a model with inline weights is hundreds of MiB,
  // and each weight larger than a block is parsed through a slower copying path.
  google::protobuf::io::FileInputStream raw(fd, 1 << 20);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(nesting);
  return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage() && raw.GetErrno() == 0;
}

}  // namespace

std::string folderOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool sameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void loadModelFile(const std::string& path, onnx::ModelProto& model) {
  auto fail = [&](const std::string& cause) { throw ModelError(path + ": " + cause); };
  RegularFile file(path);
  if (file.fd() < 0)
    fail(file.error() == "is a folder" ? "is a folder, not a model file" : file.error());
  if (file.size() > INT_MAX)
    fail("is larger than 2 GiB, which protobuf cannot parse; store the weights as external data");
  if (!parseNested(file.fd(), kProtobufNesting, model)) {
    // protobuf says only "failed": a second parse with room for deeper nesting tells a
    // model nested too deep (an If in an If ... 200 deep) from one that is not a model.
    onnx::ModelProto deeper;
    if (::lseek(file.fd(), 0, SEEK_SET) == 0 && parseNested(file.fd(), kProbeNesting, deeper))
      fail("not supported: its messages are nested deeper than " +
           std::to_string(kProtobufNesting) + " levels (protobuf's limit; about " +
           std::to_string(kProtobufNesting / 3) + " levels of If/Loop/Scan bodies)");
    fail("not an ONNX model: the protobuf does not parse (truncated or another format)");
  }
  if (model.ir_version() <= 0 || !model.has_graph())
    fail("not an ONNX model: ir_version or graph is missing (truncated or another format)");
  if (model.opset_import_size() == 0) fail("not an ONNX model: it imports no opset");
  try {
    validateModel(model);
    checkExternalData(model, folderOf(path), path);
  } catch (const ModelError& e) {
    fail(e.what());
  }
}

void saveModelFile(onnx::ModelProto& model, const std::string& path,
                   const std::string& source_folder) {
  auto fail = [&](const std::string& cause) { throw ModelError(path + ": " + cause); };
  const std::string folder = folderOf(path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) fail("output folder '" + folder + "': " + errnoText());
  if (!S_ISDIR(st.st_mode)) fail("output folder '" + folder + "' is not a folder");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail("is a folder");
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    fail("the rewritten model is larger than 2 GiB; protobuf cannot write it");

  // The output must not take the name of one of the model's external data files: in the
  // input's folder the rename would replace that data file (part of the input) with the
  // model, elsewhere it would replace the link made for it; either way the saved model's
  // weights would be read from the model file itself.
  const std::string name = path.substr(path.find_last_of('/') + 1);
  for (const std::string& location : externalLocations(model)) {
    std::string relative = location;
    while (relative.rfind("./", 0) == 0) relative.erase(0, 2);
    if (relative == name || sameFile(folder + "/" + location, path))
      fail("is the name of the external data file " + quoted(location) +
           " the model refers to; choose another output name");
  }

  std::string temp = path + ".tmp-XXXXXX";
  std::vector<char> temp_buf(temp.begin(), temp.end());
  temp_buf.push_back('\0');
  int fd = ::mkstemp(temp_buf.data());
  if (fd < 0) fail("cannot write to output folder '" + folder + "': " + errnoText());
  temp.assign(temp_buf.data());
  std::vector<std::string> created;
  auto cleanUp = [&] {
    ::unlink(temp.c_str());
    for (auto it = created.rbegin(); it != created.rend(); ++it)
      if (::unlink(it->c_str()) != 0) ::rmdir(it->c_str());
  };
  try {
    {
      FdCloser closer{fd};
      ::fchmod(fd, 0644);
      google::protobuf::io::FileOutputStream out(fd, 1 << 20);  // 1 MiB writes, as reads
      if (!model.SerializeToZeroCopyStream(&out) || !out.Flush())
        fail("write failed: " + std::string(std::strerror(out.GetErrno())));
      if (::fsync(fd) != 0) fail("write failed: " + errnoText());
    }
    if (!sameFile(folder, source_folder)) {
      try {
        linkExternalData(model, source_folder, folder, created);
      } catch (const ModelError& e) {
        fail(e.what());
      }
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename into place: " + errnoText());
  } catch (...) {
    cleanUp();
    throw;
  }
}

}  // namespace onnx_rewrite
