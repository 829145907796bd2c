// Checkpoint headers whose sizes are absurd, overflow int64 or ask for more memory than exists
// are refused before anything is allocated; weights that are not finite are refused by name.
// (Truncation, trailing data, zero/negative fields and indivisible heads are proven in
// testbench/tests/model/test_checkpoint.cpp.)
#include <cmath>
#include <limits>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::test;

namespace {

using Wide = unsigned __int128;

std::string decimal(Wide v) {
  std::string s;
  do {
    s.insert(s.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v);
  return s;
}

// The float32 values a llama2.c checkpoint of these header fields holds, in 128 bits (written
// from the format's tensor list, independently of Config::checkpoint_floats).
Wide exact_floats(const std::vector<int32_t>& h) {
  const Wide d = h[0], hid = h[1], L = h[2], heads = h[3], kvh = h[4], V = std::abs(h[5]), S = h[6];
  const Wide hd = d / heads, kv = hd * kvh;
  Wide n = V * d;                                  // token_embedding
  n += L * d + L * d * d + 2 * L * kv * d + L * d * d + L * d + 3 * L * hid * d;
  n += d + S * hd;                                 // rms_final, freq_cis
  if (h[5] < 0) n += V * d;                        // wcls
  return n;
}

std::string header_file(const std::string& name, const std::vector<int32_t>& h) {
  return write_bytes(name, pod_bytes(h));
}

Config tiny() {
  Config c;
  c.dim = 8, c.hidden_dim = 12, c.n_layers = 2, c.n_heads = 2, c.n_kv_heads = 1;
  c.vocab_size = 300, c.seq_len = 4;
  return c;
}

}  // namespace

TEST(CheckpointLimits, SizesWhoseProductsOverflowInt64AreRefusedWithTheirExactTotal) {
  // Every field is within the per-field limit, but n_layers * dim * dim = 2^72.
  const std::vector<int32_t> h = {1 << 24, 1 << 24, 1 << 24, 1 << 22, 1 << 22, 1 << 24, 1 << 24};
  ASSERT_GT(exact_floats(h), Wide(std::numeric_limits<int64_t>::max()));
  const std::string path = header_file("overflow.bin", h);
  const std::string e = error_of([&] { read_checkpoint_config(path); });
  EXPECT_NAMES(e, path);
  // the message states the true size, not a wrapped-around one
  EXPECT_NAMES(e, decimal(exact_floats(h)));
  EXPECT_ONE_LINE(e);
}

TEST(CheckpointLimits, TotalJustBelowInt64StillRefusedAsTooLarge) {
  // 2^62-ish floats: no product overflows, but no file of 16 EiB exists; the answer is a size
  // limit, not a request to read that much.
  const std::vector<int32_t> h = {1 << 20, 1 << 20, 1 << 20, 1 << 19, 1 << 19, 1 << 20, 1 << 20};
  const std::string path = header_file("huge.bin", h);
  const std::string e = error_of([&] { read_checkpoint(path); });
  EXPECT_NAMES(e, path);
  EXPECT_NAMES(e, decimal(exact_floats(h)));
}

TEST(CheckpointLimits, KvCacheBeyondMemoryIsRefusedNamingSeqLen) {
  // A small model with an absurd context: the weights fit in ~190 MB, but its K and V cache
  // would be n_layers * kv_dim * seq_len * 2 = 2^36 floats (256 GiB), allocated when the model
  // is built. The header alone must be refused.
  const std::vector<int32_t> h = {2048, 1, 1, 1024, 1024, 1, 1 << 24};
  const std::string path = header_file("kv.bin", h);
  const std::string e = error_of([&] { read_checkpoint_config(path); });
  EXPECT_NAMES(e, path);
  EXPECT_NAMES(e, "seq_len");
  EXPECT_NAMES(e, std::to_string(int64_t(1) << 36));  // 2 * 1 * 2048 * 2^24
}

TEST(CheckpointLimits, MostNegativeVocabSizeIsRefused) {
  // -vocab_size marks a separate classifier; INT32_MIN has no positive counterpart.
  const std::string path =
      header_file("intmin.bin", {8, 12, 1, 2, 2, std::numeric_limits<int32_t>::min(), 4});
  const std::string e = error_of([&] { read_checkpoint_config(path); });
  EXPECT_NAMES(e, "vocab_size");
}

TEST(CheckpointLimits, NonFiniteWeightsAreRefusedNamingTheTensor) {
  const Config c = tiny();
  Weights w = random_weights(c, 3);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Weights broken = w;
    broken.layers[1].wk(0, 5) = bad;
    const std::string path = temp_path("nonfinite.bin");
    write_checkpoint(path, c, broken);
    const std::string e = error_of([&] { read_checkpoint(path); });
    EXPECT_NAMES(e, path);
    EXPECT_NAMES(e, "wk");
    EXPECT_ONE_LINE(e);
    // an int8 Model does not check the matrices at load (Residency::on_demand): its quantiser
    // refuses the weight, and the error names the file and the tensor all the same
    const std::string q = error_of([&] { Model::load(path, WeightFormat::int8); });
    EXPECT_NAMES(q, path);
    EXPECT_NAMES(q, "wk of layer 1");
    EXPECT_ONE_LINE(q);
  }
  {  // the classifier, quantised first, and a norm vector, which the on_demand load checks itself
    Weights broken = w;
    broken.token_embedding(2, 1) = std::numeric_limits<float>::quiet_NaN();
    const std::string path = temp_path("nonfinite_embedding.bin");
    write_checkpoint(path, c, broken);
    EXPECT_NAMES(error_of([&] { Model::load(path, WeightFormat::int8); }), "token_embedding");
    broken = w;
    broken.layers[0].rms_ffn(3) = std::numeric_limits<float>::infinity();
    write_checkpoint(path, c, broken);
    const std::string e = error_of([&] { Model::load(path, WeightFormat::int8); });
    EXPECT_NAMES(e, path);
    EXPECT_NAMES(e, "rms_ffn_weight of layer 0");
  }
  // and the same file with finite weights reads back
  const std::string ok = temp_path("finite.bin");
  write_checkpoint(ok, c, w);
  EXPECT_NO_THROW(read_checkpoint(ok));
}

TEST(CheckpointLimits, DirectoryAndEmptyFileAreRefused) {
  const std::string dir = ::testing::TempDir();
  EXPECT_NAMES(error_of([&] { read_checkpoint(dir); }), dir);
  const std::string empty = write_bytes("empty.bin", "");
  EXPECT_NAMES(error_of([&] { read_checkpoint(empty); }), "header");
  EXPECT_NAMES(error_of([&] { Model::load(empty); }), empty);
}
