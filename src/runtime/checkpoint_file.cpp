#include "runtime/checkpoint_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <system_error>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::runtime {
namespace {

constexpr char kMagic[8] = {'T', 'G', 'C', 'K', 'P', 'T', '0', '1'};
constexpr char kEndMagic[8] = {'T', 'G', 'C', 'K', 'E', 'N', 'D', '1'};
constexpr char kManifestName[] = "MANIFEST";
constexpr char kManifestFirstLine[] = "taskgrid-checkpoint 1";
enum RecordKind : uint32_t { kVersion = 1, kObservation = 2 };

struct Header {
  char magic[8];
  uint32_t rank;
  uint32_t ranks;
  uint64_t checkpoint;
};
struct RecordHeader {
  uint32_t kind;
  uint32_t crc;  // of the payload
  uint64_t a;    // the handle
  uint64_t b;    // an observation's call number; 0 for a version
  uint64_t bytes;
};
struct Trailer {
  uint64_t records;
  uint64_t payload_bytes;
  uint32_t crc;  // of the two counts
  uint32_t reserved;
  char magic[8];
};

std::string system_error_text(int error) { return std::strerror(error); }

// fsync of a folder: makes a rename in it durable.
std::string sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return "cannot open " + folder + ": " + system_error_text(errno);
  std::string error;
  if (::fsync(fd) != 0) error = "fsync of " + folder + ": " + system_error_text(errno);
  ::close(fd);
  return error;
}

// Writes `text` to folder/name durably: a temporary file, fsync, rename.
std::string write_durably(const std::string& folder, const std::string& name,
                          const std::string& text) {
  const std::string temporary = folder + "/" + name + ".tmp";
  const std::string final_name = folder + "/" + name;
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) return "cannot create " + temporary + ": " + system_error_text(errno);
  std::string error;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0)
    error = "cannot write " + temporary + ": " + system_error_text(errno);
  else if (::fsync(fileno(file)) != 0)
    error = "fsync of " + temporary + ": " + system_error_text(errno);
  if (std::fclose(file) != 0 && error.empty())
    error = "cannot close " + temporary + ": " + system_error_text(errno);
  if (error.empty() && std::rename(temporary.c_str(), final_name.c_str()) != 0)
    error = "cannot rename " + temporary + ": " + system_error_text(errno);
  if (error.empty()) error = sync_folder(folder);
  if (!error.empty()) std::remove(temporary.c_str());
  return error;
}

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw Error("taskgrid: checkpoint file " + path + ": " + what);
}

}  // namespace

uint32_t checksum(const void* data, size_t bytes, uint32_t crc) {
  // zlib takes at most 4 GiB at a time (uInt).
  const auto* at = static_cast<const Bytef*>(data);
  uLong value = crc;
  while (bytes > 0) {
    const size_t piece = std::min<size_t>(bytes, std::numeric_limits<uInt>::max());
    value = crc32(value, at, static_cast<uInt>(piece));
    at += piece;
    bytes -= piece;
  }
  return static_cast<uint32_t>(value);
}

std::string checkpoint_folder(const std::string& dir, uint64_t checkpoint) {
  return dir + "/ckpt-" + std::to_string(checkpoint);
}

std::string rank_file_name(int rank) { return "rank-" + std::to_string(rank) + ".bin"; }

RankFileWriter::RankFileWriter(const std::string& folder, int rank, int ranks, uint64_t checkpoint)
    : folder_(folder),
      temporary_(folder + "/rank-" + std::to_string(rank) + ".tmp"),
      final_(folder + "/" + rank_file_name(rank)) {
  std::error_code code;
  std::filesystem::create_directories(folder_, code);
  if (code) {
    fail("cannot create " + folder_ + ": " + code.message());
    return;
  }
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (!file_) {
    fail("cannot create " + temporary_ + ": " + system_error_text(errno));
    return;
  }
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.rank = static_cast<uint32_t>(rank);
  header.ranks = static_cast<uint32_t>(ranks);
  header.checkpoint = checkpoint;
  write(&header, sizeof header);
}

RankFileWriter::~RankFileWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void RankFileWriter::fail(const std::string& what) {
  if (error_.empty()) error_ = what;
}

void RankFileWriter::write(const void* data, size_t bytes) {
  if (!error_.empty() || bytes == 0) return;
  if (std::fwrite(data, 1, bytes, file_) != bytes) {
    fail("cannot write " + temporary_ + ": " + system_error_text(errno));
    return;
  }
  bytes_written_ += bytes;
}

void RankFileWriter::add(uint32_t kind, uint64_t a, uint64_t b, const void* data, size_t bytes) {
  RecordHeader record{kind, checksum(data, bytes), a, b, bytes};
  write(&record, sizeof record);
  write(data, bytes);
  ++records_;
}

void RankFileWriter::add_version(uint64_t handle, const void* data, size_t bytes) {
  add(kVersion, handle, 0, data, bytes);
}

void RankFileWriter::add_observation(uint64_t call, uint64_t handle, const void* data,
                                     size_t bytes) {
  add(kObservation, handle, call, data, bytes);
}

bool RankFileWriter::seal() {
  if (!error_.empty()) return false;
  Trailer trailer{};
  trailer.records = records_;
  trailer.payload_bytes = bytes_written_;
  trailer.crc = checksum(&trailer, 2 * sizeof(uint64_t));
  std::memcpy(trailer.magic, kEndMagic, sizeof kEndMagic);
  write(&trailer, sizeof trailer);
  if (error_.empty() && std::fflush(file_) != 0)
    fail("cannot write " + temporary_ + ": " + system_error_text(errno));
  if (error_.empty() && ::fsync(fileno(file_)) != 0)
    fail("fsync of " + temporary_ + ": " + system_error_text(errno));
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (error_.empty() && closed != 0)
    fail("cannot close " + temporary_ + ": " + system_error_text(errno));
  if (error_.empty() && std::rename(temporary_.c_str(), final_.c_str()) != 0)
    fail("cannot rename " + temporary_ + ": " + system_error_text(errno));
  if (error_.empty()) fail(sync_folder(folder_));
  if (!error_.empty()) std::remove(temporary_.c_str());
  return error_.empty();
}

RankFileContents read_rank_file(const std::string& folder, int rank, int ranks,
                                uint64_t checkpoint) {
  const std::string path = folder + "/" + rank_file_name(rank);
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_file(path, "cannot open it: " + system_error_text(errno));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (size < sizeof(Header) + sizeof(Trailer))
    bad_file(path, "truncated (" + std::to_string(size) + " bytes)");
  Header header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0)
    bad_file(path, "not a TaskGrid checkpoint file (bad magic)");
  if (header.rank != static_cast<uint32_t>(rank) || header.ranks != static_cast<uint32_t>(ranks) ||
      header.checkpoint != checkpoint)
    bad_file(path, "its header says rank " + std::to_string(header.rank) + " of " +
                       std::to_string(header.ranks) + ", checkpoint " +
                       std::to_string(header.checkpoint) + "; expected rank " +
                       std::to_string(rank) + " of " + std::to_string(ranks) + ", checkpoint " +
                       std::to_string(checkpoint));
  Trailer trailer{};
  in.seekg(static_cast<std::streamoff>(size - sizeof trailer));
  in.read(reinterpret_cast<char*>(&trailer), sizeof trailer);
  if (std::memcmp(trailer.magic, kEndMagic, sizeof kEndMagic) != 0 ||
      trailer.crc != checksum(&trailer, 2 * sizeof(uint64_t)))
    bad_file(path, "truncated or corrupt (no valid trailer)");
  if (trailer.payload_bytes + sizeof trailer != size)
    bad_file(path, "truncated or corrupt: " + std::to_string(size) + " bytes, the trailer says " +
                       std::to_string(trailer.payload_bytes + sizeof trailer));
  in.seekg(sizeof header);
  uint64_t at = sizeof header;
  RankFileContents contents;
  for (uint64_t r = 0; r < trailer.records; ++r) {
    RecordHeader record{};
    if (at + sizeof record > trailer.payload_bytes)
      bad_file(path, "corrupt: record " + std::to_string(r) + " runs past the data");
    in.read(reinterpret_cast<char*>(&record), sizeof record);
    at += sizeof record;
    if (record.bytes > trailer.payload_bytes - at ||
        (record.kind != kVersion && record.kind != kObservation))
      bad_file(path, "corrupt: record " + std::to_string(r) + " has a bad header");
    std::vector<char> bytes(record.bytes);
    in.read(bytes.data(), static_cast<std::streamsize>(record.bytes));
    at += record.bytes;
    if (!in) bad_file(path, "cannot read it: " + system_error_text(errno));
    if (checksum(bytes.data(), bytes.size()) != record.crc)
      bad_file(path, "corrupt: the checksum of record " + std::to_string(r) + " (handle " +
                         std::to_string(record.a) + ") does not match its data");
    if (record.kind == kVersion)
      contents.versions[record.a] = std::move(bytes);
    else
      contents.observations.push_back({record.b, record.a, std::move(bytes)});
  }
  if (at != trailer.payload_bytes)
    bad_file(path, "corrupt: " + std::to_string(trailer.payload_bytes - at) +
                       " bytes after the last record");
  return contents;
}

std::string write_manifest(const std::string& folder, const Manifest& manifest) {
  std::ostringstream text;
  text << kManifestFirstLine << "\n"
       << "checkpoint " << manifest.checkpoint << "\n"
       << "ranks " << manifest.ranks << "\n"
       << "mode " << manifest.mode << "\n"
       << "program " << manifest.program_hash << "\n"
       << "sequence " << manifest.sequence_hash << "\n"
       << "handles " << manifest.handles.size() << "\n";
  for (const Manifest::Handle& handle : manifest.handles)
    text << "handle " << handle.id << " " << handle.bytes << " " << handle.rank << "\n";
  std::string body = text.str();
  body += "checksum " + std::to_string(checksum(body.data(), body.size())) + "\n";
  return write_durably(folder, kManifestName, body);
}

Manifest read_manifest(const std::string& folder) {
  const std::string path = folder + "/" + kManifestName;
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_file(path, "cannot open it: " + system_error_text(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t last = text.rfind("checksum ");
  if (last == std::string::npos || (last > 0 && text[last - 1] != '\n'))
    bad_file(path, "truncated (no checksum line)");
  if (std::to_string(checksum(text.data(), last)) + "\n" != text.substr(last + 9))
    bad_file(path, "corrupt (its checksum does not match)");
  std::istringstream lines(text.substr(0, last));
  std::string line;
  std::getline(lines, line);
  if (line != kManifestFirstLine) bad_file(path, "not a TaskGrid checkpoint manifest");
  Manifest manifest;
  std::string key;
  size_t handles = 0;
  lines >> key >> manifest.checkpoint >> key >> manifest.ranks >> key >> manifest.mode >> key >>
      manifest.program_hash >> key >> manifest.sequence_hash >> key >> handles;
  for (size_t i = 0; lines && i < handles; ++i) {
    Manifest::Handle handle{};
    lines >> key >> handle.id >> handle.bytes >> handle.rank;
    manifest.handles.push_back(handle);
  }
  if (!lines || (handles > 0 && key != "handle")) bad_file(path, "corrupt (unreadable fields)");
  return manifest;
}

std::vector<uint64_t> complete_checkpoints(const std::string& dir) {
  std::vector<uint64_t> found;
  std::error_code code;
  for (const auto& entry : std::filesystem::directory_iterator(dir, code)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0) continue;
    char* end = nullptr;
    const uint64_t k = std::strtoull(name.c_str() + 5, &end, 10);
    if (*end != '\0' || end == name.c_str() + 5) continue;
    if (std::filesystem::exists(entry.path() / kManifestName, code)) found.push_back(k);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string remove_checkpoint(const std::string& dir, uint64_t checkpoint) {
  std::error_code code;
  const std::string folder = checkpoint_folder(dir, checkpoint);
  // The manifest first: a half-removed folder is then no checkpoint.
  std::filesystem::remove(folder + "/" + kManifestName, code);
  if (!code) std::filesystem::remove_all(folder, code);
  if (code) return "cannot remove " + folder + ": " + code.message();
  return "";
}

}  // namespace taskgrid::runtime
