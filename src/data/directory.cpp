#include "data/directory.h"

#include <algorithm>

namespace taskgrid::data {

void RankList::grow() {
  const uint32_t capacity = (capacity_ > kInline ? capacity_ : kInline) * 2;
  int* heap = new int[capacity];
  std::copy(begin(), end(), heap);
  if (capacity_ > kInline) delete[] heap_;
  heap_ = heap;
  capacity_ = capacity;
}

}  // namespace taskgrid::data
