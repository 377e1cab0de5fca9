// Checked mode's argument types (src/core/arg_signature.h): the table
// submit() makes at compile time, its encoding, and the check arg<T> makes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/arg_signature.h"

namespace taskgrid::core {
namespace {

struct Params {
  int steps;
  float scale;
};

template <typename T>
std::string mismatch(const std::vector<char>& signature, size_t offset) {
  return arg_mismatch(signature.data(), signature.size(), offset, sizeof(T),
                      detail::TypeOf<T>::hash,
                      {detail::TypeOf<T>::name.text, detail::TypeOf<T>::name.size});
}

template <typename... Args>
std::vector<char> encoded() {
  std::vector<char> out;
  append_arg_signature(out, detail::ArgSignature<Args...>::table.entries, sizeof...(Args));
  return out;
}

TEST(ArgSignature, NamesTypesAsWritten) {
  const detail::TypeText name = detail::TypeOf<float>::name;
  EXPECT_EQ(std::string(name.text, name.size), "float");
  const detail::TypeText params = detail::TypeOf<Params>::name;
  EXPECT_NE(std::string(params.text, params.size).find("Params"), std::string::npos);
  EXPECT_NE(detail::TypeOf<int>::hash, detail::TypeOf<unsigned>::hash);
}

TEST(ArgSignature, TableHasPackedOffsets) {
  constexpr const auto& table = detail::ArgSignature<char, double, Params>::table;
  static_assert(table.entries[0].offset == 0 && table.entries[1].offset == 1);
  static_assert(table.entries[2].offset == 9 && table.entries[2].size == sizeof(Params));
  EXPECT_EQ(std::string(table.entries[1].name, table.entries[1].name_size), "double");
}

TEST(ArgSignature, ReadsAsSubmittedPass) {
  const std::vector<char> signature = encoded<int, double, Params>();
  EXPECT_EQ(mismatch<int>(signature, 0), "");
  EXPECT_EQ(mismatch<double>(signature, 4), "");
  EXPECT_EQ(mismatch<Params>(signature, 12), "");
}

TEST(ArgSignature, AnotherTypeIsNamedWithBoth) {
  const std::vector<char> signature = encoded<float, double>();
  EXPECT_EQ(mismatch<int>(signature, 0),
            "read argument 0 at offset 0 as 'int' but it was submitted as 'float'");
  EXPECT_EQ(mismatch<long long>(signature, 4),
            "read argument 1 at offset 4 as 'long long int' but it was submitted as 'double'");
}

TEST(ArgSignature, ReadsInsideOrPastArgumentsAreNamed) {
  const std::vector<char> signature = encoded<double, int>();
  EXPECT_EQ(mismatch<int>(signature, 4),
            "read at offset 4 as 'int' (4 bytes), inside argument 0 (submitted as 'double' at "
            "offset 0)");
  EXPECT_EQ(mismatch<char>(signature, 12),
            "read at offset 12 as 'char' (1 bytes), where no argument was submitted");
}

TEST(ArgSignature, MalformedBytesAreReported) {
  std::vector<char> signature = encoded<int>();
  signature.resize(signature.size() - 2);  // the name cut short
  EXPECT_EQ(mismatch<int>(signature, 0), "the task's argument types are malformed");
  EXPECT_EQ(mismatch<int>({}, 0), "the task's argument types are malformed");
}

}  // namespace
}  // namespace taskgrid::core
