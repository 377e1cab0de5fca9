#include "core/arg_signature.h"

#include <cstring>

namespace taskgrid::core {
namespace {

// An entry: offset, size, hash, name size (4, 4, 8, 4 bytes, no padding),
// then the name's bytes; the entries follow their count (4 bytes).
struct Fixed {
  uint32_t offset;
  uint32_t size;
  uint64_t hash;
  uint32_t name_size;
};

void put(std::vector<char>& out, const void* bytes, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, bytes, n);
}

// Reads entries in turn; false at the end or where the bytes are malformed.
class Reader {
 public:
  Reader(const void* bytes, size_t size) : at_(static_cast<const char*>(bytes)), left_(size) {}
  bool count(uint32_t& n) { return take(&n, sizeof n); }
  bool next(Fixed& fixed, std::string_view& name) {
    if (!take(&fixed.offset, 4) || !take(&fixed.size, 4) || !take(&fixed.hash, 8) ||
        !take(&fixed.name_size, 4) || fixed.name_size > left_)
      return false;
    name = std::string_view(at_, fixed.name_size);
    at_ += fixed.name_size;
    left_ -= fixed.name_size;
    return true;
  }

 private:
  bool take(void* out, size_t n) {
    if (n > left_) return false;
    std::memcpy(out, at_, n);
    at_ += n;
    left_ -= n;
    return true;
  }
  const char* at_;
  size_t left_;
};

// Appended in place: "'" + std::string(name) trips GCC 12's -Wrestrict (a
// false positive).
std::string quoted(std::string_view name) {
  std::string out(1, '\'');
  out.append(name);
  out += '\'';
  return out;
}

}  // namespace

void append_arg_signature(std::vector<char>& out, const detail::ArgType* types, size_t count) {
  const auto n = static_cast<uint32_t>(count);
  put(out, &n, sizeof n);
  for (size_t i = 0; i < count; ++i) {
    const detail::ArgType& type = types[i];
    put(out, &type.offset, 4);
    put(out, &type.size, 4);
    put(out, &type.hash, 8);
    put(out, &type.name_size, 4);
    put(out, type.name, type.name_size);
  }
}

std::string arg_mismatch(const void* signature, size_t signature_bytes, size_t offset, size_t size,
                         uint64_t type_hash, std::string_view type_name) {
  Reader reader(signature, signature_bytes);
  uint32_t count = 0;
  if (!reader.count(count)) return "the task's argument types are malformed";
  // Built only for a message: a matching read (every read of a correct
  // task) allocates nothing.
  const auto read = [&] {
    return "at offset " + std::to_string(offset) + " as " + quoted(type_name) + " (" +
           std::to_string(size) + " bytes)";
  };
  for (uint32_t i = 0; i < count; ++i) {
    Fixed fixed{};
    std::string_view name;
    if (!reader.next(fixed, name)) return "the task's argument types are malformed";
    const auto which = [i] { return "argument " + std::to_string(i); };
    if (offset == fixed.offset) {
      if (fixed.hash == type_hash && fixed.size == size) return "";
      if (fixed.hash == type_hash)  // the same name, another size: two types of one name
        return "read " + which() + " " + read() + " but it was submitted as " + quoted(name) +
               " of " + std::to_string(fixed.size) + " bytes";
      return "read " + which() + " at offset " + std::to_string(offset) + " as " +
             quoted(type_name) + " but it was submitted as " + quoted(name);
    }
    if (offset > fixed.offset && offset < uint64_t{fixed.offset} + fixed.size)
      return "read " + read() + ", inside " + which() + " (submitted as " + quoted(name) +
             " at offset " + std::to_string(fixed.offset) + ")";
  }
  return "read " + read() + ", where no argument was submitted";
}

}  // namespace taskgrid::core
