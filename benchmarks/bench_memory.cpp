// Peak resident memory of decoding (docs/performance.md, summary row 6): a child process
// (this program re-executed) reads a checkpoint, decodes a few tokens and writes its own peak
// resident set (VmHWM of /proc/self/status) to a file; the parent compares it with the budget
// checkpoint size + KV cache + 64 MB. (Not wait4's ru_maxrss: Linux folds the parent's
// high-water mark into a child's maxrss at exec, so the parent's weights would be counted.)
//
//   BM_PeakRss/<mode>/<shape>   mode float: the reference Model (target: peak <= budget)
//                               mode int8:  Model::load(..., WeightFormat::int8), as
//                                           `kvcim generate --weights int8` runs it; its budget
//                                           counts the codes (a quarter of the checkpoint), not
//                                           the floats, which it reads once and gives back
//                               mode idle:  the child starts and exits (the process baseline)
//                               mode cim:   a CIM run's decode on configs/hw/sram_analog.yaml
//                                           (placed and sized as `kvcim run` does): every
//                                           matrix in its macros, the tokens through them and
//                                           through the float shadow; vs_float = its peak /
//                                           float decode's of the same run (target <= 1.5)
//                               mode cim_eval: the evaluation's scoring instead (score_corpus):
//                                           one sequence of the whole context teacher-forced in
//                                           chunks through the float reference (its matrices
//                                           streamed) and the macros; pass_MB: the peak of the
//                                           scoring alone (the peak reset once the macros are
//                                           written and the floats given back, as score_corpus
//                                           starts: /proc/self/clear_refs)
//
// Checkpoints: random weights of the shapes of stories15M and stories110M written with
// cmodel::write_checkpoint into a temporary directory when first needed (removed at exit), and
// the embedded stories260K. KVCIM_BENCH_SMOKE=1: the embedded model and a tiny random shape only.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "kvcim/runtime/evaluation.hpp"
#include "kvcim/runtime/hardware.hpp"

extern char** environ;

using namespace kvcim::cmodel;
namespace fs = std::filesystem;

namespace {

constexpr const char* kChildFlag = "--kvcim-decode-child";
constexpr int kDecodeTokens = 16;
constexpr double kSlackBytes = 64e6;  // the target's 64 MB

bool smoke() { return std::getenv("KVCIM_BENCH_SMOKE") != nullptr; }

// ---- the child: load, decode, exit ----------------------------------------------------------

// Peak resident set of this process in bytes (VmHWM), or -1.
long long vm_hwm_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;  // "... kB"
  return -1;
}

// A CIM run's work on the checkpoint: decode (with the float shadow) or one evaluation sequence.
long long cim(const std::string& mode, const std::string& path) {
  using namespace kvcim::runtime;
  const Checkpoint ck = read_checkpoint(path, Residency::read_only);  // as `kvcim run` loads it
  const Config& c = ck.config;
  auto hw = kvcim::mapper::load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_analog.yaml");
  const int context = mode == "cim" ? std::min(kDecodeTokens, c.seq_len) : c.seq_len;
  // as `kvcim run` places it: sized to the model when the spec is too small
  kvcim::mapper::fit_if_too_small(hw, c, kvcim::mapper::Policy{}, false);
  const kvcim::mapper::Placement placement = place_for_run(ck, hw, kvcim::mapper::Policy{}, std::min(kDecodeTokens, c.seq_len));
  const SessionHardware shw = session_hardware(ck, placement, cmodel_tiles(hw.tile(c.head_dim())));
  const auto linears = std::make_shared<CimWeights>(c, ck.weights, shw.macro, shw.blocks);
  auto make_cim = [&] {
    return std::make_unique<SessionBackend>(c, ck.weights, BackendChoice{}, linears, shw.tiles, shw.k_per_channel,
                                            shw.kv_window);
  };
  if (mode == "cim") {
    const std::unique_ptr<SessionBackend> cim = make_cim();
    SessionBackend& be = *cim;
    ReferenceBackend ref(c, ck.weights);
    RunState s_cim(c), s_ref(c);
    for (int pos = 0; pos < context; ++pos) {
      const int token = (pos * 31 + 1) % c.vocab_size;
      benchmark::DoNotOptimize(forward(c, ck.weights, s_cim, be, token, pos).data());
      benchmark::DoNotOptimize(forward(c, ck.weights, s_ref, ref, token, pos).data());
    }
    return -1;
  }
  // the evaluation's scoring of one sequence of the whole context (runtime/evaluation.cpp), its
  // own peak from here on, after the floats are given back as score_corpus first does
  ck.weights.release_pages();
  std::ofstream("/proc/self/clear_refs") << "5";
  EvalCorpus corpus;
  corpus.sequences.emplace_back();
  for (int pos = 0; pos < context; ++pos) corpus.sequences[0].ids.push_back((pos * 31 + 1) % c.vocab_size);
  benchmark::DoNotOptimize(score_corpus(c, ck.weights, make_cim, corpus, 2).kl.data());
  return vm_hwm_bytes();
}

// The child's work; `pass`: the scoring's own peak (cim_eval), else -1.
int decode(const std::string& mode, const std::string& path, long long& pass) {
  pass = -1;
  if (mode == "idle") return 0;
  if (mode == "cim" || mode == "cim_eval") {
    pass = cim(mode, path);
    return 0;
  }
  if (mode != "float" && mode != "int8") return 3;
  auto m = Model::load(path, mode == "int8" ? WeightFormat::int8 : WeightFormat::float32);
  const Config& c = m->config();
  const int steps = std::min(kDecodeTokens, c.seq_len);
  for (int pos = 0; pos < steps; ++pos) benchmark::DoNotOptimize(m->forward((pos * 31 + 1) % c.vocab_size, pos).data());
  return 0;
}

int run_child(const std::string& mode, const std::string& path, const std::string& out) {
  long long pass = -1;
  const int rc = decode(mode, path, pass);
  if (rc != 0) return rc;
  std::ofstream f(out);
  f << vm_hwm_bytes() << " " << pass << "\n";
  return f ? 0 : 4;
}

// ---- the parent ------------------------------------------------------------------------------

// The temporary directory of written checkpoints, removed when the program ends.
struct TempDir {
  fs::path dir;
  ~TempDir() { cleanup(); }
  void cleanup() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
    dir.clear();
  }
  const fs::path& get() {
    if (dir.empty()) {
      std::string templ = (fs::temp_directory_path() / "kvcim-bench-memory-XXXXXX").string();
      if (!mkdtemp(templ.data())) throw std::runtime_error("bench_memory: mkdtemp failed");
      dir = templ;
    }
    return dir;
  }
};
TempDir& temp_dir() {
  static TempDir t;
  return t;
}

struct Shape {
  std::string name;
  Config config;  // dim == 0: the embedded checkpoint
};

std::vector<Shape> shapes() {
  std::vector<Shape> s = {{"stories260K", Config{}}};
  if (smoke()) {
    s.push_back({"tiny", Config{64, 160, 2, 4, 4, 512, 64, true}});
  } else {
    s.push_back({"stories15M", Config{288, 768, 6, 6, 6, 32000, 256, true}});
    s.push_back({"stories110M", Config{768, 2048, 12, 12, 12, 32000, 1024, true}});
  }
  return s;
}

// The checkpoint of a shape, written once (the weights are freed before any child starts).
std::string checkpoint_path(const Shape& shape) {
  if (shape.config.dim == 0) return default_model_path();
  static std::map<std::string, std::string> written;
  auto& p = written[shape.name];
  if (p.empty()) {
    const std::string path = (temp_dir().get() / (shape.name + ".bin")).string();
    write_checkpoint(path, shape.config, random_weights(shape.config, 77));
    p = path;
  }
  return p;
}

// Runs the child; returns its peak resident set in bytes, or -1 (and a message) on failure;
// `pass`: the peak of cim_eval's scoring alone (-1 otherwise).
long long child_peak_rss(const std::string& mode, const std::string& path, std::string& error, long long& pass) {
  const std::string out = (temp_dir().get() / "peak.txt").string();
  std::error_code ec;
  fs::remove(out, ec);
  std::vector<std::string> args = {"/proc/self/exe", kChildFlag, mode, path, out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) {
    error = "posix_spawn failed";
    return -1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    error = "waitpid failed";
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = "the decode child failed (status " + std::to_string(status) + ")";
    return -1;
  }
  std::ifstream in(out);
  long long peak = -1;
  if (!(in >> peak >> pass) || peak <= 0) {
    error = "the decode child reported no VmHWM";
    return -1;
  }
  return peak;
}

void BM_PeakRss(benchmark::State& state, std::string mode, Shape shape) {
  const std::string path = checkpoint_path(shape);
  const Config c = read_checkpoint_config(path);
  long long peak = 0, pass = -1;
  for (auto _ : state) {
    std::string error;
    peak = child_peak_rss(mode, path, error, pass);
    if (peak < 0) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  const double ckpt = static_cast<double>(fs::file_size(path));
  // the whole context's K and V at float32, as the reference KvCache allocates them
  const double kv = static_cast<double>(KvCache::bytes_per_token(c, 4)) * c.seq_len;
  // int8: one byte per weight instead of four (the per-row scales and padding are in the slack)
  const double budget = (mode == "int8" ? ckpt / 4 : ckpt) + kv + kSlackBytes;
  state.SetLabel(mode + " " + shape.name);
  state.counters["peak_rss_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["checkpoint_MB"] = ckpt / 1e6;
  state.counters["kv_cache_MB"] = kv / 1e6;
  state.counters["budget_MB"] = budget / 1e6;
  state.counters["headroom_MB"] = (budget - static_cast<double>(peak)) / 1e6;
  static std::map<std::string, long long> float_peak;  // per shape, from the float row of this run
  if (mode == "float") float_peak[shape.name] = peak;
  if (mode.rfind("cim", 0) == 0 && float_peak.count(shape.name))
    state.counters["vs_float"] = static_cast<double>(peak) / static_cast<double>(float_peak[shape.name]);
  if (pass > 0) {
    state.counters["pass_MB"] = static_cast<double>(pass) / 1e6;
    if (float_peak.count(shape.name))
      state.counters["pass_vs_float"] = static_cast<double>(pass) / static_cast<double>(float_peak[shape.name]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], kChildFlag) == 0) {
    try {
      return run_child(argv[2], argv[3], argv[4]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_memory child: %s\n", e.what());
      return 2;
    }
  }
  benchmark::RegisterBenchmark("BM_PeakRss/idle", BM_PeakRss, std::string("idle"), shapes().front())
      ->Iterations(1)->Unit(benchmark::kMillisecond);
  for (const Shape& s : shapes())
    for (const char* mode : {"float", "int8", "cim", "cim_eval"})
      benchmark::RegisterBenchmark(("BM_PeakRss/" + std::string(mode) + "/" + s.name).c_str(), BM_PeakRss,
                                   std::string(mode), s)
          ->Iterations(1)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  temp_dir().cleanup();
  return 0;
}
