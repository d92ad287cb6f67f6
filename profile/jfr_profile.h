// Builds a Profile from a JFR recording: profiler.Malloc / profiler.Free from any
// producer (nmprof, async-profiler), jdk.ObjectAllocationSample from JDK recordings,
// and the process, settings and statistics events nmprof writes per chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "common/mapped_file.h"
#include "profile/profile.h"
#include "profile/sample_selector.h"

namespace nmprof::profile {

// Throws jfr::FormatError when the bytes are not a readable JFR recording; damage
// that still lets reading go on ends up in Profile::warnings.
Profile build_profile(std::span<const uint8_t> recording);
// Told how far reading its events has come, as a share of the file (0 to 1).
using ReadProgress = std::function<void(double share)>;

// The same for a file; also throws std::system_error when it cannot be opened.
// Memory stays bounded however long the recording: pages of the file already read
// are let go, and samples are summed as they are read. `selector`, when given, chooses
// the samples and frees taken in while they are read.
// Native frames get their file, line and inlined functions from the modules' DWARF
// (SourceLines) unless `lines` says Skip: reading that DWARF is most of the time a
// short recording takes to read, wasted when nothing will show a stack.
enum class NativeLines : bool { Skip, Resolve };
Profile read_profile(const std::string& path, const ReadProgress& progress = {}, SampleSelector* selector = nullptr,
                     NativeLines lines = NativeLines::Resolve);

// Reads several recordings into one profile, one file after another in time order:
// the chunk files of a looping recording (run --loop), whose profile is then that of
// the whole time they cover (what each allocated, summed; what was live at the end of
// the last file of each process), or recordings of other processes. Throws as
// read_profile does, for the file being read.
class ProfileReader {
 public:
  explicit ProfileReader(SampleSelector* selector = nullptr, NativeLines lines = NativeLines::Resolve);
  ~ProfileReader();
  void read(const std::string& path, const ReadProgress& progress = {});
  void read(std::span<const uint8_t> recording);
  // The profile of all the files read; warnings name their file when there were several.
  Profile finish();

 private:
  struct Reading;
  void read(std::span<const uint8_t> recording, const MappedFile* file, const std::string& name,
            const ReadProgress& progress);
  std::unique_ptr<Reading> reading_;
};

}  // namespace nmprof::profile
