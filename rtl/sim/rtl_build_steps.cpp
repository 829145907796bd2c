#include "rtl_build_steps.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"

namespace kvcim::rtl::build {

namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open it");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// FNV-1a, 64 bits: a cache key, not a defence against forgery.
struct Fnv {
  uint64_t h = 14695981039346656037ull;
  void add(const std::string& s) {
    for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator: ("ab","c") and ("a","bc") differ
  }
};

// The first line of a tool's log that reads like an error (else its last line).
std::string first_error(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("%Error") != std::string::npos || line.find("error:") != std::string::npos ||
        line.find("%Warning") != std::string::npos || line.find("undefined reference") != std::string::npos)
      return line;
    if (!line.empty()) last = line;
  }
  return last;
}

struct Job {
  std::vector<std::string> argv;
  std::string log;   // stdout and stderr
  std::string what;  // for the error: "Verilator", "the compiler", ...
};

pid_t spawn(const Job& job) {
  std::vector<char*> args;
  for (const std::string& a : job.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls here: the parent may have threads
    const int fd = ::open(job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (pid < 0) fail(job.argv[0], "process", "(not started)", "fork failed");
  return pid;
}

// Runs the jobs, at most `parallel` at once; the first failure (after the running ones end) is a
// kvcim::Error quoting the tool's first error line.
void run_jobs(const std::vector<Job>& jobs, size_t parallel) {
  std::map<pid_t, const Job*> running;
  const Job* failed = nullptr;
  int failed_status = 0;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (!failed && next < jobs.size() && running.size() < parallel) {
      running[spawn(jobs[next])] = &jobs[next];
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && !failed) {
      failed = it->second;
      failed_status = status;
    }
    running.erase(it);
  }
  if (failed) {
    const std::string line = first_error(failed->log);
    fail(failed->what, "exit status",
         WIFEXITED(failed_status) ? std::to_string(WEXITSTATUS(failed_status)) : "(killed)",
         line.empty() ? "failed (" + failed->argv[0] + ")" : line);
  }
}

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  return j.at(key).get<std::vector<std::string>>();
}

// Verilator's generated C++ compiles in one translation unit per half when included in name order
// (rtl/rtl.cmake, kvcim_rtl_unity): the slow half (construction) and the fast half (evaluation).
void write_unity(const fs::path& model, const fs::path& slow, const fs::path& fast) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(model))
    if (e.path().extension() == ".cpp") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::ofstream s(slow), f(fast);
  for (const std::string& file : files)
    ((file.size() > 10 && file.compare(file.size() - 10, 10, "__Slow.cpp") == 0) ? s : f)
        << "#include \"" << file << "\"\n";
  if (!s || !f) fail(slow.parent_path().string(), "folder", "(unwritable)", "cannot write the build's sources");
}

// The libraries Verilator asks for (its generated <prefix>.cmake: "-lz" for the FST writer).
std::vector<std::string> verilator_ldlibs(const fs::path& model) {
  std::ifstream in(model / "Vcim_attention_tile.cmake");
  std::string line;
  const std::string key = "_USER_LDLIBS \"";
  while (std::getline(in, line)) {
    const size_t at = line.find(key);
    if (at == std::string::npos) continue;
    std::istringstream words(line.substr(at + key.size(), line.rfind('"') - at - key.size()));
    std::vector<std::string> libs;
    for (std::string w; words >> w;) libs.push_back(w);
    return libs;
  }
  return {};
}

}  // namespace

Recipe read_recipe(const std::string& path) { return parse_recipe(read_file(path), path); }

Recipe parse_recipe(const std::string& text, const std::string& path) {
  Recipe r;
  r.path = path;
  r.text = text;
  try {
    const nlohmann::json j = nlohmann::json::parse(r.text);
    r.verilator = j.at("verilator").get<std::string>();
    r.verilator_version = j.at("verilator_version").get<std::string>();
    r.cxx = j.at("cxx").get<std::string>();
    r.ar = j.at("ar").get<std::string>();
    r.sv_sources = strings(j, "sv_sources");
    r.verilator_args = strings(j, "verilator_args");
    r.tile_sources = strings(j, "tile_sources");
    r.module_sources = strings(j, "module_sources");
    r.cxx_flags = strings(j, "cxx_flags");
    r.defines = strings(j, "defines");
    r.include_dirs = strings(j, "include_dirs");
    r.archive = strings(j, "archive");
    r.libs = strings(j, "libs");
    r.link_flags = strings(j, "link_flags");
    r.hash_dirs = strings(j, "hash_dirs");
  } catch (const nlohmann::json::exception& e) {
    fail(path, "recipe", "(malformed)", std::string(e.what()) + ": reconfigure the build (cmake)");
  }
  return r;
}

void check_tools(const Recipe& r) {
  if (::access(r.verilator.c_str(), X_OK) != 0)
    fail("rtl build", "verilator", r.verilator,
         "not found: install Verilator " + r.verilator_version + " (apt-get install verilator)");
  if (::access(r.cxx.c_str(), X_OK) != 0)
    fail("rtl build", "compiler", r.cxx, "not found: install a C++20 compiler (apt-get install g++)");
  if (::access(r.ar.c_str(), X_OK) != 0)
    fail("rtl build", "archiver", r.ar, "not found: install binutils (apt-get install binutils)");
}

void check_inputs(const Recipe& r) {
  for (const auto* list : {&r.sv_sources, &r.tile_sources, &r.module_sources, &r.archive})
    for (const std::string& f : *list)
      if (::access(f.c_str(), R_OK) != 0)
        fail("rtl build", "input", f, "missing: build kvcim first (make), or reconfigure (cmake)");
  for (const std::string& l : r.libs)
    if (!l.empty() && l[0] != '-' && ::access(l.c_str(), R_OK) != 0)
      fail("rtl build", "library", l, "missing: build kvcim first (make)");
}

std::string inputs_hash(const Recipe& r) {
  std::vector<std::string> files = r.sv_sources;
  for (const auto* list : {&r.tile_sources, &r.module_sources, &r.archive}) files.insert(files.end(), list->begin(), list->end());
  for (const std::string& l : r.libs)
    if (!l.empty() && l[0] != '-') files.push_back(l);
  for (const std::string& d : r.hash_dirs) {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(d, ec))
      if (e.is_regular_file() && (e.path().extension() == ".hpp" || e.path().extension() == ".h"))
        files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  Fnv h;
  h.add(r.text);
  h.add(r.verilator_version);
  h.add(std::to_string(kRtlModuleAbi));
  for (const std::string& f : files) {
    h.add(f);
    h.add(read_file(f));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.h));
  return hex;
}

void build_module(const Recipe& r, const cmodel::cim::TileParams& p, const std::string& dir,
                  const std::string& module_file) {
  const fs::path d(dir);
  const fs::path model = d / "model";
  fs::create_directories(model);
  // 1. Verilate, as verilate() does for the table (rtl_configs.cmake), with the geometry as -G.
  Job v{{r.verilator, "--compiler", "gcc", "--prefix", "Vcim_attention_tile", "--Mdir", model.string(), "--make",
         "cmake", "--top", "cim_attention_tile", "--cc"},
        (d / "verilator.log").string(), "Verilator"};
  v.argv.insert(v.argv.end(), r.verilator_args.begin(), r.verilator_args.end());
  for (const std::string& g : {"-GHEAD_DIM=" + std::to_string(p.head_dim), "-GTOKENS=" + std::to_string(p.tokens),
                               "-GKV_BITS=" + std::to_string(p.kv_bits), "-GPROB_BITS=" + std::to_string(p.prob_bits)})
    v.argv.push_back(g);
  v.argv.insert(v.argv.end(), r.sv_sources.begin(), r.sv_sources.end());
  run_jobs({v}, 1);
  // 2. Compile the model's two halves, the harness and the module entry.
  const fs::path slow = d / "model_slow.cpp", fast = d / "model_fast.cpp";
  write_unity(model, slow, fast);
  std::vector<std::string> common{r.cxx};
  common.insert(common.end(), r.cxx_flags.begin(), r.cxx_flags.end());
  for (const std::string& def : r.defines) common.push_back("-D" + def);
  common.push_back("-DKVCIM_RTL_TILE_CONFIG=" + std::to_string(p.head_dim) + "," + std::to_string(p.tokens) + "," +
                   std::to_string(p.kv_bits) + "," + std::to_string(p.prob_bits));
  common.push_back("-I" + model.string());
  // (the compiler's own /usr/include given as -I breaks libstdc++'s #include_next)
  for (const std::string& inc : r.include_dirs)
    if (inc != "/usr/include") common.push_back("-I" + inc);
  std::vector<std::string> sources{slow.string(), fast.string()};
  sources.insert(sources.end(), r.tile_sources.begin(), r.tile_sources.end());
  const size_t n_archived = sources.size();  // the module sources are linked as objects
  sources.insert(sources.end(), r.module_sources.begin(), r.module_sources.end());
  std::vector<Job> compiles;
  std::vector<std::string> objects;
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string obj = (d / ("obj" + std::to_string(i) + ".o")).string();
    Job c{common, (d / ("compile" + std::to_string(i) + ".log")).string(), "the compiler"};
    for (const std::string& a : {std::string("-c"), sources[i], std::string("-o"), obj}) c.argv.push_back(a);
    compiles.push_back(std::move(c));
    objects.push_back(obj);
  }
  run_jobs(compiles, 2);
  // 3. The model, harness and the shared Verilator runtime in one archive, hidden from the
  //    module's exports by --exclude-libs as the table's are; the module's entry linked beside it.
  const std::string archive = (d / "libtile.a").string();
  Job a{{r.ar, "rcs", archive}, (d / "ar.log").string(), "the archiver"};
  a.argv.insert(a.argv.end(), objects.begin(), objects.begin() + static_cast<long>(n_archived));
  a.argv.insert(a.argv.end(), r.archive.begin(), r.archive.end());
  run_jobs({a}, 1);
  Job l{{r.cxx}, (d / "link.log").string(), "the linker"};
  l.argv.insert(l.argv.end(), r.link_flags.begin(), r.link_flags.end());
  l.argv.push_back("-o");
  l.argv.push_back((d / module_file).string());
  l.argv.insert(l.argv.end(), objects.begin() + static_cast<long>(n_archived), objects.end());
  l.argv.push_back(archive);
  l.argv.insert(l.argv.end(), r.libs.begin(), r.libs.end());
  const std::vector<std::string> ldlibs = verilator_ldlibs(model);
  l.argv.insert(l.argv.end(), ldlibs.begin(), ldlibs.end());
  run_jobs({l}, 1);
}

}  // namespace kvcim::rtl::build
