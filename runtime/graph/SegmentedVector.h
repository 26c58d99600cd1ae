//===- SegmentedVector.h - append-only array with stable references ------===//
//
// The graph's node and value arenas: rewrites append while rules hold references,
// so elements must never move. std::deque gives that, but with 512-byte blocks it
// holds three to five nodes or values per block: on 10^6-node graphs every access
// goes through a megabytes-large block map (one more cache miss), and scans walk
// hundreds of thousands of separately allocated blocks. Here segment s holds
// 16 * 2^s elements, so a graph of any size has at most ~28 segments, the segment
// table stays in cache, and indexing is a bit scan plus two loads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnx_rewrite {

template <class T>
class SegmentedVector {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](size_t i) { return segments_[segmentOf(i)][offsetIn(i)]; }
  const T& operator[](size_t i) const { return segments_[segmentOf(i)][offsetIn(i)]; }

  /// Appends a default-constructed element; references to earlier elements stay valid.
  T& emplace_back() {
    const size_t s = segmentOf(size_);
    if (s == segments_.size()) {
      segments_.emplace_back();
      // Reserved once and never exceeded, so the segment never reallocates.
      segments_.back().reserve(kFirst << s);
    }
    ++size_;
    return segments_[s].emplace_back();
  }

 private:
  static constexpr size_t kFirstBits = 4;
  static constexpr size_t kFirst = size_t{1} << kFirstBits;

  /// Segment s covers indices [kFirst * (2^s - 1), kFirst * (2^(s+1) - 1)).
  static size_t segmentOf(size_t i) {
    return 63 - static_cast<size_t>(__builtin_clzll((i >> kFirstBits) + 1));
  }
  static size_t offsetIn(size_t i) { return i - kFirst * ((size_t{1} << segmentOf(i)) - 1); }

  std::vector<std::vector<T>> segments_;
  size_t size_ = 0;
};

}  // namespace onnx_rewrite
