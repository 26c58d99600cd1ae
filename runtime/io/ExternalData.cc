//===- ExternalData.cc - external tensor files: checks and relocation ----===//
#include "runtime/io/ExternalData.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/TensorData.h"

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

std::string joinPath(const std::string& dir, const std::string& rel) {
  return dir.empty() ? rel : dir + "/" + rel;
}

/// References must stay inside the model's folder (as ONNX's checker demands).
void checkLocationShape(const std::string& location, const std::string& tensor) {
  if (location.empty())
    throw ModelError("tensor '" + tensor + "' is marked external but names no location");
  if (location.front() == '/' || location == ".." || location.rfind("../", 0) == 0 ||
      location.find("/../") != std::string::npos)
    throw ModelError("tensor '" + tensor + "' has external data location '" + location +
                     "' outside the model's folder");
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

void checkExternalData(onnx::ModelProto& model, const std::string& base_dir) {
  forEachTensor(model, [&](onnx::TensorProto& t) {
    if (!isExternal(t)) return;
    ExternalRef ref = externalRef(t);
    checkLocationShape(ref.location, t.name());
    const std::string path = joinPath(base_dir, ref.location);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw ModelError("external data file '" + path + "' of tensor '" + t.name() +
                       "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      throw ModelError("external data file '" + path + "' of tensor '" + t.name() +
                       "' is not a regular file");
    const size_t element = elementSize(t.data_type());
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    const uint64_t length = ref.length >= 0 ? static_cast<uint64_t>(ref.length)
                                            : static_cast<uint64_t>(count) * element;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (ref.offset > size || length > size - ref.offset)  // no overflow for huge offsets
      throw ModelError("external data file '" + path + "' is too short for tensor '" + t.name() +
                       "' (needs " + std::to_string(ref.offset + length) + " bytes, has " +
                       std::to_string(st.st_size) + ")");
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
    char resolved[PATH_MAX];
    if (!::realpath(source.c_str(), resolved) || ::symlink(resolved, target.c_str()) != 0)
      throw ModelError("cannot make external data file '" + source + "' available at '" + target +
                       "': " + std::strerror(errno));
    created.push_back(target);
  }
}

}  // namespace onnx_rewrite
