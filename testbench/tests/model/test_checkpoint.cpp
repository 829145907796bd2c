// The checkpoint reader validates before trusting, and the writer round-trips any shape.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"
#include "test_paths.hpp"
#include "config_of.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

namespace {

std::string write_header(const std::string& name, std::vector<int32_t> header, int64_t extra_floats) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), header.size() * 4);
  std::vector<float> zeros(extra_floats, 0.0f);
  out.write(reinterpret_cast<const char*>(zeros.data()), extra_floats * 4);
  return path;
}

// Expects read_checkpoint to throw with a message that names `field`.
void expect_error_naming(const std::string& path, const std::string& field) {
  try {
    read_checkpoint(path);
    FAIL() << "expected an error naming " << field;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Checkpoint, EmbeddedModelHeader) {
  Config c = read_checkpoint_config(test::model_path());
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 512);
  EXPECT_TRUE(c.shared_classifier);
}

TEST(Checkpoint, RejectsTruncatedFile) {
  expect_error_naming(write_header("short.bin", {64, 172}, 0), "header");
  // a valid header with half the tensors
  Config c = test::config_of(8, 16, 1, 2, 2, 300, 4, true);
  expect_error_naming(write_header("half.bin", {8, 16, 1, 2, 2, 300, 4}, c.checkpoint_floats() / 2),
                      "file length");
}

TEST(Checkpoint, RejectsTrailingData) {
  Config c = test::config_of(8, 16, 1, 2, 2, 300, 4, true);
  expect_error_naming(write_header("long.bin", {8, 16, 1, 2, 2, 300, 4}, c.checkpoint_floats() + 3),
                      "file length");
}

TEST(Checkpoint, RejectsZeroOrNegativeSizes) {
  expect_error_naming(write_header("zero_dim.bin", {0, 16, 1, 2, 2, 300, 4}, 10), "dim");
  expect_error_naming(write_header("neg_layers.bin", {8, 16, -1, 2, 2, 300, 4}, 10), "n_layers");
  expect_error_naming(write_header("zero_seq.bin", {8, 16, 1, 2, 2, 300, 0}, 10), "seq_len");
  expect_error_naming(write_header("huge.bin", {8, 16, 1, 2, 2, 300, 2000000000}, 10), "seq_len");
}

TEST(Checkpoint, RejectsIndivisibleHeads) {
  expect_error_naming(write_header("heads.bin", {10, 16, 1, 3, 3, 300, 4}, 10), "n_heads");
  expect_error_naming(write_header("kvheads.bin", {12, 16, 1, 6, 4, 300, 4}, 10), "n_kv_heads");
}

TEST(Checkpoint, WriterRoundTripsSeparateClassifierAndOddSizes) {
  for (bool shared : {true, false}) {
    Config c = test::config_of(12, 37, 3, 6, 2, 301, 7, shared);  // odd hidden and vocab, GQA 3:1
    Weights w = random_weights(c, 7);
    const std::string path = ::testing::TempDir() + "/rt.bin";
    write_checkpoint(path, c, w);
    Checkpoint back = read_checkpoint(path);
    EXPECT_EQ(back.config.shared_classifier, shared);
    EXPECT_EQ(back.config.hidden_dim, 37);
    EXPECT_TRUE(back.weights.layers[2].w2.isApprox(w.layers[2].w2, 0.0f));
    EXPECT_TRUE(back.weights.classifier().isApprox(w.classifier(), 0.0f));
    EXPECT_EQ(back.weights.wcls.size() == 0, shared);
  }
}

TEST(Checkpoint, RandomWeightsDependOnSeed) {
  Config c = test::config_of(8, 16, 1, 2, 1, 300, 4, true);
  EXPECT_TRUE(random_weights(c, 1).layers[0].wq.isApprox(random_weights(c, 1).layers[0].wq, 0.0f));
  EXPECT_FALSE(random_weights(c, 1).layers[0].wq.isApprox(random_weights(c, 2).layers[0].wq));
}

// A loaded checkpoint's matrices view one mapping of the file; a copy of the weights is a copy
// (changing it changes neither the original nor the file), a move keeps the view.
TEST(Checkpoint, LoadedMatricesViewTheFileAndCopiesAreDeep) {
  Config c = test::config_of(12, 37, 2, 6, 2, 301, 7, false);
  const Weights w = random_weights(c, 5);
  const std::string path = ::testing::TempDir() + "/view.bin";
  write_checkpoint(path, c, w);
  Checkpoint ck = read_checkpoint(path);
  ASSERT_TRUE(ck.weights.layers[1].wk.is_view());
  ASSERT_TRUE(ck.weights.wcls.is_view());
  // consecutive tensors of the file are consecutive in memory: one mapping, no copies
  EXPECT_EQ(ck.weights.layers[0].wk.data() + ck.weights.layers[0].wk.size(), ck.weights.layers[1].wk.data());

  Weights copy = ck.weights;
  EXPECT_FALSE(copy.layers[1].wk.is_view());
  EXPECT_NE(copy.layers[1].wk.data(), ck.weights.layers[1].wk.data());
  copy.layers[1].wk(0, 5) = 42.0f;
  EXPECT_EQ(ck.weights.layers[1].wk(0, 5), w.layers[1].wk(0, 5));
  EXPECT_TRUE(ck.weights.layers[1].wk.isApprox(w.layers[1].wk, 0.0f));

  // a write to the loaded weights stays in this process (a private mapping): the file keeps its value
  ck.weights.layers[0].w2(1, 1) = -7.0f;
  EXPECT_TRUE(read_checkpoint(path).weights.layers[0].w2.isApprox(w.layers[0].w2, 0.0f));

  const float* at = ck.weights.wcls.data();
  WeightMatrix moved = std::move(ck.weights.wcls);
  EXPECT_EQ(moved.data(), at);
  EXPECT_TRUE(moved.is_view());
  EXPECT_EQ(ck.weights.wcls.size(), 0);
  EXPECT_TRUE(moved.isApprox(w.wcls, 0.0f));

  // assignment from an expression that reads the matrix itself
  WeightMatrix twice = w.layers[0].wq;
  twice = twice * 2.0f;
  EXPECT_TRUE(twice.isApprox(w.layers[0].wq * 2.0f, 0.0f));
}

namespace {
// Resident bytes of this process (the second field of /proc/self/statm, in pages).
double resident_bytes() {
  std::ifstream in("/proc/self/statm");
  long long size = 0, resident = 0;
  in >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

template <class F>
void for_each_matrix(const Weights& w, F f) {
  f(w.token_embedding);
  for (const LayerWeights& l : w.layers)
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) f(*m);
  f(w.wcls);
}
}  // namespace

// Residency::on_demand (a Model with int8 weights): the load maps no matrix page, a matrix
// released after use gives its pages back, and the values read again are the file's.
// Residency::resident keeps the pages, and releasing is a no-op there (a changed weight stays
// changed).
TEST(Checkpoint, OnDemandLoadGivesPagesBackAndKeepsValues) {
  Config c = test::config_of(256, 688, 2, 8, 8, 4096, 16, false);  // about 15 MB of floats
  const Weights w = random_weights(c, 11);
  const std::string path = ::testing::TempDir() + "/on_demand.bin";
  write_checkpoint(path, c, w);
  const double file = static_cast<double>(c.checkpoint_floats()) * 4;
  const auto equal = [&](const Weights& got) {
    return got.token_embedding.isApprox(w.token_embedding, 0.0f) && got.wcls.isApprox(w.wcls, 0.0f) &&
           got.layers[1].w2.isApprox(w.layers[1].w2, 0.0f) && got.layers[0].wq.isApprox(w.layers[0].wq, 0.0f);
  };

  const double before = resident_bytes();
  Checkpoint ck = read_checkpoint(path, Residency::on_demand);
  EXPECT_LT(resident_bytes() - before, 0.25 * file) << "the load mapped the matrices";
  EXPECT_TRUE(equal(ck.weights));
  double sum = 0.0;
  for_each_matrix(ck.weights, [&](const WeightMatrix& m) { sum += m.sum(); });  // every page read
  EXPECT_GT(resident_bytes() - before, 0.75 * file) << sum;
  for_each_matrix(ck.weights, [](const WeightMatrix& m) { m.release_pages(); });
  EXPECT_LT(resident_bytes() - before, 0.25 * file) << "release_pages kept the pages";
  EXPECT_TRUE(equal(ck.weights)) << "a released page read again differs from the file";

  // resident: the checked pages stay, and a change survives release_pages
  const double before_resident = resident_bytes();
  Checkpoint kept = read_checkpoint(path);
  EXPECT_GT(resident_bytes() - before_resident, 0.75 * file);
  kept.weights.layers[0].w2(1, 1) = -7.0f;
  for_each_matrix(kept.weights, [](const WeightMatrix& m) { m.release_pages(); });
  EXPECT_EQ(kept.weights.layers[0].w2(1, 1), -7.0f);
  EXPECT_GT(resident_bytes() - before_resident, 0.75 * file);
}

// Residency::read_only (what `kvcim run` loads): checked whole at load like resident (its pages
// mapped, a non-finite weight refused naming the tensor), and a streamed ReferenceBackend's
// teacher-forced pass gives each matrix's pages back after using it, with the floats of the
// resident checkpoint's pass bit for bit.
TEST(Checkpoint, ReadOnlyLoadIsCheckedAndAStreamedPassGivesPagesBack) {
  Config c = test::config_of(256, 688, 2, 8, 8, 4096, 16, false);  // about 15 MB of floats
  Weights w = random_weights(c, 12);
  const std::string path = ::testing::TempDir() + "/read_only.bin";
  write_checkpoint(path, c, w);
  const double file = static_cast<double>(c.checkpoint_floats()) * 4;
  const std::vector<int> ids = {1, 7, 300, 4000, 22, 9, 9, 17};
  std::vector<float> expected;
  {
    const Checkpoint kept = read_checkpoint(path);
    ReferenceBackend plain(c, kept.weights);
    forward_sequence(c, kept.weights, plain, ids.data(), 0, static_cast<int>(ids.size()), expected);
  }
  const double before = resident_bytes();
  const Checkpoint ck = read_checkpoint(path, Residency::read_only);
  EXPECT_GT(resident_bytes() - before, 0.75 * file) << "the load did not read (check) the matrices";
  ReferenceBackend streamed(c, ck.weights);
  streamed.set_streamed(true);
  std::vector<float> got;
  forward_sequence(c, ck.weights, streamed, ids.data(), 0, static_cast<int>(ids.size()), got);
  // what stays: the embedding (its rows are read one token at a time, not streamed; this shape's
  // classifier is its own matrix) and the pass's own memory
  const double embedding = static_cast<double>(w.token_embedding.size()) * 4;
  EXPECT_LT(resident_bytes() - before, embedding + 0.1 * file) << "the streamed pass kept the matrices' pages";
  EXPECT_EQ(got, expected) << "a streamed pass changed the floats";

  w.layers[1].w3(2, 3) = std::nanf("");
  write_checkpoint(path, c, w);
  try {
    read_checkpoint(path, Residency::read_only);
    FAIL() << "a NaN weight was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w3 of layer 1"), std::string::npos) << e.what();
  }
}

namespace {
// The peak resident set since the last reset_peak() (VmHWM of /proc/self/status), in bytes.
double peak_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) * 1024;  // "... kB"
  return -1;
}
// Sets the peak to the current resident set (Linux >= 4.0: "5" to /proc/self/clear_refs).
bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}
}  // namespace

// A streamed pass maps and gives back a block of rows at a time: its peak is the blocks in
// flight (a 2 MB huge page each at most, where the page cache maps them so), not the largest
// matrix (a classifier of 16 MB here), and its floats are the same.
TEST(Checkpoint, StreamedPassHoldsBlocksOfRowsNotAWholeMatrix) {
  Config c = test::config_of(256, 688, 2, 8, 8, 16384, 16, false);
  const Weights w = random_weights(c, 13);
  const std::string path = ::testing::TempDir() + "/streamed_blocks.bin";
  write_checkpoint(path, c, w);
  const std::vector<int> ids = {1, 7, 300, 16000, 22, 9, 9, 17};
  std::vector<float> expected, got;
  ReferenceBackend plain(c, w);
  forward_sequence(c, w, plain, ids.data(), 0, static_cast<int>(ids.size()), expected);
  const Checkpoint ck = read_checkpoint(path, Residency::read_only);
  ReferenceBackend streamed(c, ck.weights);
  streamed.set_streamed(true);
  forward_sequence(c, ck.weights, streamed, ids.data(), 0, static_cast<int>(ids.size()), got);  // gives pages back
  ASSERT_EQ(got, expected);
  streamed.cache().reset();
  const double before = resident_bytes();
  ASSERT_TRUE(reset_peak());
  forward_sequence(c, ck.weights, streamed, ids.data(), 0, static_cast<int>(ids.size()), got);
  const double classifier = static_cast<double>(w.wcls.size()) * 4;
  EXPECT_LT(peak_bytes() - before, 0.4 * classifier) << "a streamed pass held a whole matrix";
  EXPECT_LT(resident_bytes() - before, 0.1 * classifier) << "a streamed pass kept pages";
  EXPECT_EQ(got, expected);
}

// KvCache::release: the positions' pages go back (the resident set drops by the cache written),
// and the cache takes a sequence again from position 0 with its values.
TEST(KvCache, ReleaseGivesPagesBackAndTheCacheTakesANewSequence) {
  const Config c = test::config_of(256, 688, 4, 4, 4, 64, 2048, true);  // 2 x 8 MB of K and V
  KvCache cache(c);
  std::vector<float> k(static_cast<size_t>(c.kv_dim())), v(k.size());
  for (int l = 0; l < c.n_layers; ++l)
    for (int p = 0; p < c.seq_len; ++p) {
      std::fill(k.begin(), k.end(), static_cast<float>(p));
      std::fill(v.begin(), v.end(), static_cast<float>(-p));
      cache.write(l, p, k.data(), v.data());
    }
  // every page of the cache is resident now, fresh or reused from the heap
  const double written = static_cast<double>(KvCache::bytes_per_token(c, 4)) * c.seq_len, full = resident_bytes();
  cache.release();
  EXPECT_GT(full - resident_bytes(), 0.9 * written) << "release kept the pages";
  EXPECT_EQ(cache.length(0), 0);
  std::fill(k.begin(), k.end(), 3.0f);
  std::fill(v.begin(), v.end(), 4.0f);
  cache.write(0, 0, k.data(), v.data());
  EXPECT_EQ(cache.key(0, 1, 0)[5], 3.0f);
  EXPECT_EQ(cache.value(0, 3, 0)[0], 4.0f);
}
