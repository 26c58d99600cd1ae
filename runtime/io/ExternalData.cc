//===- ExternalData.cc - external tensor files: checks and relocation ----===//
#include "runtime/io/ExternalData.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/graph/TensorCheck.h"
#include "runtime/graph/TensorData.h"
#include "runtime/io/RegularFile.h"

namespace onnx_rewrite {
namespace {

void walkGraph(onnx::GraphProto& g, const std::function<void(onnx::TensorProto&)>& fn);

void walkNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
               const std::function<void(onnx::TensorProto&)>& fn) {
  for (onnx::NodeProto& n : nodes) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_t()) fn(*a.mutable_t());
      for (onnx::TensorProto& t : *a.mutable_tensors()) fn(t);
      if (a.has_sparse_tensor()) {
        fn(*a.mutable_sparse_tensor()->mutable_values());
        fn(*a.mutable_sparse_tensor()->mutable_indices());
      }
      if (a.has_g()) walkGraph(*a.mutable_g(), fn);
      for (onnx::GraphProto& g : *a.mutable_graphs()) walkGraph(g, fn);
    }
  }
}

void walkGraph(onnx::GraphProto& g, const std::function<void(onnx::TensorProto&)>& fn) {
  for (onnx::TensorProto& t : *g.mutable_initializer()) fn(t);
  for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer()) {
    fn(*s.mutable_values());
    fn(*s.mutable_indices());
  }
  walkNodes(*g.mutable_node(), fn);
}

/// References must stay inside the model's folder (as ONNX's checker demands).
void checkLocationShape(const std::string& location, const std::string& tensor) {
  if (location.empty())
    throw ModelError("tensor " + quoted(tensor) + " is marked external but names no location");
  if (location.front() == '/' || location == ".." || location.rfind("../", 0) == 0 ||
      location.find("/../") != std::string::npos ||
      (location.size() >= 3 && location.compare(location.size() - 3, 3, "/..") == 0))
    throw ModelError("tensor " + quoted(tensor) + " has external data location " +
                     quoted(location) + " outside the model's folder");
}

/// Copies regular file `from` to a new file `to` (kernel-side where it can); "" or why not.
/// A partly written `to` is removed.
std::string copyFile(const std::string& from, const std::string& to) {
  RegularFile in(from);
  if (in.fd() < 0) return in.error();
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) return std::strerror(errno);
  std::string error;
  long long left = in.size();
  while (left > 0 && error.empty()) {
    ssize_t n = ::copy_file_range(in.fd(), nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      char buffer[1 << 16];  // no kernel-side copy between these files: read and write
      n = ::read(in.fd(), buffer, sizeof buffer);
      if (n > 0 && ::write(out, buffer, static_cast<size_t>(n)) != n) n = -1;
    }
    if (n < 0) error = std::strerror(errno);
    if (n == 0) error = "the file shrank while it was copied";
    if (n > 0) left -= n;
  }
  if (::close(out) != 0 && error.empty()) error = std::strerror(errno);
  if (!error.empty()) ::unlink(to.c_str());
  return error;
}

}  // namespace

void forEachTensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn) {
  walkGraph(*model.mutable_graph(), fn);
  for (onnx::FunctionProto& f : *model.mutable_functions()) walkNodes(*f.mutable_node(), fn);
}

std::vector<std::string> externalLocations(onnx::ModelProto& model) {
  std::vector<std::string> result;
  std::set<std::string> seen;
  forEachTensor(model, [&](onnx::TensorProto& t) {
    if (!isExternal(t)) return;
    std::string location = externalRef(t).location;
    if (seen.insert(location).second) result.push_back(location);
  });
  return result;
}

void checkExternalData(onnx::ModelProto& model, const std::string& base_dir,
                       const std::string& model_path) {
  // The model's folder as named and, for a model file that is a symlink (the Hugging Face
  // cache links snapshots/<rev>/model.onnx to blobs/<hash>), the folder it really lies in.
  std::vector<std::string> folders = {base_dir.empty() ? "." : base_dir};
  if (!model_path.empty()) {
    char real[PATH_MAX];
    if (::realpath(model_path.c_str(), real)) {
      const std::string path(real);
      folders.push_back(path.substr(0, std::max<size_t>(path.rfind('/'), 1)));
    }
  }
  struct FileFacts {
    long long size = -1;  // -1: could not be opened (error says why)
    std::string error;
    bool inside = false;
  };
  std::unordered_map<std::string, FileFacts> files;
  forEachTensor(model, [&](onnx::TensorProto& t) {
    if (!isExternal(t)) return;
    ExternalRef ref = externalRef(t);
    checkLocationShape(ref.location, t.name());
    const std::string path = joinPath(base_dir, ref.location);
    const std::string where =
        "external data file " + quoted(path) + " of tensor " + quoted(t.name());
    // Each file is opened and resolved once: exporters write all tensors into one file (or
    // a few), and a 10^5-node model has tens of thousands of tensors.
    auto [known, first] = files.try_emplace(path);
    FileFacts& facts = known->second;
    if (first) {
      RegularFile file(path);
      facts.error = file.error();
      facts.size = file.fd() < 0 ? -1 : file.size();
      // The location's text stays inside the folder; a symlink on the way must too, or
      // any readable file could be linked next to the output.
      facts.inside = file.fd() >= 0 && resolvesInside(path, folders);
    }
    if (facts.size < 0) throw ModelError(where + ": " + facts.error);
    if (!facts.inside)
      throw ModelError(where +
                       " resolves (through a symlink) to a file outside the model's folder");
    const std::optional<int64_t> count = checkedElementCount(t.dims());
    const std::optional<int64_t> bytes =
        count ? payloadBytes(t.data_type(), *count) : std::optional<int64_t>();
    if (!bytes) throw ModelError(where + ": the tensor's size is unknown or beyond 2^63 - 1");
    const uint64_t length =
        ref.length >= 0 ? static_cast<uint64_t>(ref.length) : static_cast<uint64_t>(*bytes);
    const uint64_t size = static_cast<uint64_t>(facts.size);
    if (ref.offset > size || length > size - ref.offset)  // no overflow for huge offsets
      throw ModelError("external data file " + quoted(path) + " is too short for tensor " +
                       quoted(t.name()) + " (needs " + std::to_string(ref.offset) + " + " +
                       std::to_string(length) + " bytes, has " + std::to_string(size) + ")");
  });
}

void linkExternalData(onnx::ModelProto& model, const std::string& from_dir,
                      const std::string& to_dir, std::vector<std::string>& created) {
  for (const std::string& location : externalLocations(model)) {
    const std::string source = joinPath(from_dir, location);
    const std::string target = joinPath(to_dir, location);
    struct stat src {
    }, dst{};
    if (::stat(source.c_str(), &src) != 0)
      throw ModelError("external data file '" + source + "': " + std::strerror(errno));
    if (::stat(target.c_str(), &dst) == 0) {
      if (src.st_dev == dst.st_dev && src.st_ino == dst.st_ino) continue;
      throw ModelError("'" + target + "' exists and is not the external data file '" + source +
                       "' the output refers to; refusing to overwrite it");
    }
    // Sub-folders named by the location.
    for (size_t slash = location.find('/'); slash != std::string::npos;
         slash = location.find('/', slash + 1)) {
      const std::string dir = joinPath(to_dir, location.substr(0, slash));
      if (::mkdir(dir.c_str(), 0777) == 0) created.push_back(dir);
    }
    // Follow symlinks (Hugging Face caches link weights into blobs/): linking the link
    // itself would copy a relative target that is dangling from the new folder.
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      created.push_back(target);
      continue;
    }
    // Another file system (or one without hard links): a copy. A symlink would do without
    // the disk, but a data file that resolves outside the output's folder is exactly what
    // loading refuses (checkExternalData), so the output would not load again.
    const std::string error = copyFile(source, target);
    if (!error.empty())
      throw ModelError("cannot make external data file '" + source + "' available at '" + target +
                       "': " + error);
    created.push_back(target);
  }
}

}  // namespace onnx_rewrite
