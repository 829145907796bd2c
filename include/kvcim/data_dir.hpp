// Where the shipped data lives (models/, configs/, testdata/eval/). It is found at run time, not
// compiled in, so that one binary works from the build tree and installed by pip.
#pragma once
#include <string>

namespace kvcim {

// The name of the file that points at the data root from a folder holding kvcim binaries:
// CMake writes one into the build folder at configure time (the source tree's path), the Python
// package ships one beside its data ("data"). A relative path is taken from the file's folder.
inline constexpr const char* kDataRootFile = "kvcim-data-root";

// The data root, the first of:
//  1. $KVCIM_DATA_DIR (it must name a folder, else an Error naming the variable and the path);
//  2. the folder given to set_data_dir (the Python package passes its own data at import);
//  3. the path in the first kvcim-data-root file found in the folder of the running binary (the
//     executable, or the library holding this code: the Python module) or a folder above it.
// Throws Error when none applies.
std::string data_dir();

// Sets (2) above; `dir` must be a folder. An empty string clears it.
void set_data_dir(const std::string& dir);

}  // namespace kvcim
