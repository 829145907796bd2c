#include "kvcim/cmodel/weights.hpp"
#include "kvcim/enum_names.hpp"

#include <cstdint>
#include <new>
#include <stdexcept>
#include <utility>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kvcim::cmodel {

FloatArena::FloatArena(size_t count) : count_(count) {
  constexpr size_t kHuge = size_t(2) << 20;
  const size_t bytes = (count * sizeof(float) + kHuge - 1) / kHuge * kHuge;
#if defined(__linux__)
  // Mapped with a huge page of slack so that the block can start on a 2 MB boundary; advised
  // before the first touch, so that every 2 MB of it is one page fault.
  mapped_ = bytes + kHuge;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = p;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(uintptr_t(kHuge) - 1);
  data_ = reinterpret_cast<float*>(begin);
#ifdef MADV_HUGEPAGE
  ::madvise(data_, bytes, MADV_HUGEPAGE);
#endif
#else
  mapped_ = bytes;
  base_ = ::operator new(bytes, std::align_val_t{64});
  heap_ = true;
  data_ = static_cast<float*>(base_);
#endif
}

std::shared_ptr<FloatArena> FloatArena::map_file(const std::string& path, size_t offset, size_t count,
                                                 bool read_only) {
#if defined(__linux__)
  if (offset % alignof(float) != 0) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const size_t bytes = offset + count * sizeof(float);
  // Private: a caller that changes a weight changes its own copy of that page only; read_only
  // forbids the change, so that release() can drop a page and read the same floats back.
  // (Not MAP_POPULATE: on a writable private mapping it made the first pass over the weights
  // 2.5 x slower on the VMs we measure.)
  void* p = ::mmap(nullptr, bytes, read_only ? PROT_READ : PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return nullptr;
  std::shared_ptr<FloatArena> a(new FloatArena());
  a->base_ = p;
  a->mapped_ = bytes;
  a->data_ = reinterpret_cast<float*>(static_cast<char*>(p) + offset);
  a->count_ = count;
  a->read_only_ = read_only;
  return a;
#else
  (void)path, (void)offset, (void)count, (void)read_only;
  return nullptr;
#endif
}

FloatArena::~FloatArena() {
  if (base_ == nullptr) return;
  if (heap_) {
    ::operator delete(base_, std::align_val_t{64});
    return;
  }
#if defined(__linux__)
  ::munmap(base_, mapped_);
#endif
}

void FloatArena::advise(size_t offset, size_t count, int advice, bool inward) const {
#if defined(__linux__)
  if (!read_only_ || count == 0 || offset > count_ || count > count_ - offset) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_ + offset), end = begin + count * sizeof(float);
  const uintptr_t lo = (inward ? begin + page - 1 : begin) / page * page;
  const uintptr_t hi = inward ? end / page * page : end;
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, advice);  // a hint: an error leaves the pages as they are
#else
  (void)offset, (void)count, (void)advice, (void)inward;
#endif
}

void FloatArena::release(size_t offset, size_t count) const {
#if defined(__linux__)
  // Only whole pages inside the range: a page shared with a neighbour would read again just as
  // well (its floats are the file's), but whoever is reading the neighbour would pay the fault.
  advise(offset, count, MADV_DONTNEED, true);
#else
  (void)offset, (void)count;
#endif
}

void FloatArena::populate(size_t offset, size_t count) const {
#if defined(__linux__) && defined(MADV_POPULATE_READ)
  advise(offset, count, MADV_POPULATE_READ, false);  // EINVAL before Linux 5.14: the reads fault
#else
  (void)offset, (void)count;
#endif
}

void WeightMatrix::populate_pages(Eigen::Index row0, Eigen::Index count) const {
  if (arena_) arena_->populate(static_cast<size_t>(data() + row0 * cols() - arena_->data()), static_cast<size_t>(count * cols()));
}

void WeightMatrix::release_pages(Eigen::Index row0, Eigen::Index count) const {
  if (arena_) arena_->release(static_cast<size_t>(data() + row0 * cols() - arena_->data()), static_cast<size_t>(count * cols()));
}

void WeightMatrix::own(Matrix&& m) {
  owned_ = std::move(m);
  arena_.reset();
  reseat(owned_.data(), owned_.rows(), owned_.cols());
}

void WeightMatrix::take(WeightMatrix&& other) noexcept {
  const Eigen::Index r = other.rows(), c = other.cols();
  float* p = other.data();
  owned_ = std::move(other.owned_);  // Eigen's move keeps the heap block: p stays valid
  arena_ = std::move(other.arena_);
  reseat(arena_ ? p : owned_.data(), r, c);
  other.owned_.resize(0, 0);
  other.reseat(nullptr, 0, 0);
}

void WeightMatrix::resize(Eigen::Index rows, Eigen::Index cols) {
  if (!arena_ && owned_.rows() == rows && owned_.cols() == cols) return;
  arena_.reset();
  owned_.resize(rows, cols);
  reseat(owned_.data(), rows, cols);
}

WeightMatrix WeightMatrix::view(std::shared_ptr<const FloatArena> arena, size_t offset, Eigen::Index rows,
                                Eigen::Index cols) {
  if (rows < 0 || cols < 0 || offset > arena->size() ||
      static_cast<size_t>(rows) * static_cast<size_t>(cols) > arena->size() - offset)
    throw std::out_of_range("WeightMatrix::view: outside the arena");
  WeightMatrix w;
  w.reseat(arena->data() + offset, rows, cols);
  w.arena_ = std::move(arena);
  return w;
}

constexpr std::array kMatrixKindNames{"wq", "wk", "wv", "wo", "w1", "w2", "w3", "classifier"};
static_assert(kMatrixKindNames.size() == enum_count(MatrixKind::classifier));
const char* name(MatrixKind kind) { return enum_name(kind, kMatrixKindNames); }

void Weights::release_pages() const {
  token_embedding.release_pages();
  wcls.release_pages();
  for (const LayerWeights& l : layers)
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) m->release_pages();
}

const WeightMatrix& Weights::matrix(int layer, MatrixKind kind) const {
  if (kind == MatrixKind::classifier) return classifier();
  const LayerWeights& w = layers.at(layer);
  switch (kind) {
    case MatrixKind::wq: return w.wq;
    case MatrixKind::wk: return w.wk;
    case MatrixKind::wv: return w.wv;
    case MatrixKind::wo: return w.wo;
    case MatrixKind::w1: return w.w1;
    case MatrixKind::w2: return w.w2;
    case MatrixKind::w3: return w.w3;
    default: return classifier();
  }
}

}  // namespace kvcim::cmodel
