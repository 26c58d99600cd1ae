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
#include "runtime/io/ExternalData.h"

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
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(errnoText());
  if (S_ISDIR(st.st_mode)) fail("is a folder, not a model file");
  if (st.st_size > INT_MAX)
    fail("is larger than 2 GiB, which protobuf cannot parse; store the weights as external data");
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(errnoText());
  FdCloser closer{fd};
  {
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
      fail("not an ONNX model: the protobuf does not parse (truncated or another format)");
    if (raw.GetErrno() != 0) fail(errnoText());
  }
  if (model.ir_version() <= 0 || !model.has_graph())
    fail("not an ONNX model: ir_version or graph is missing (truncated or another format)");
  if (model.opset_import_size() == 0) fail("not an ONNX model: it imports no opset");
  try {
    checkExternalData(model, folderOf(path));
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
      google::protobuf::io::FileOutputStream out(fd);
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
