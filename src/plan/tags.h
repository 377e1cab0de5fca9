// TransferTags: the tags of point-to-point transfers and broadcast groups.
// Owns the cycling counter. In spmd mode every rank draws the same tags in
// the same order, so a sender and its receiver agree without a message.
#pragma once

namespace taskgrid::plan {

class TransferTags {
 public:
  // Tags start above the transport's control tags.
  static constexpr int kFirst = 16;

  explicit TransferTags(int max_tag) : max_tag_(max_tag) {}

  // Tags cycle; a collision needs 2^28 transfers in flight between one pair.
  int next() {
    offset_ = offset_ >= max_tag_ - kFirst ? 0 : offset_ + 1;
    return kFirst + offset_;
  }

 private:
  int max_tag_;
  int offset_ = 0;
};

}  // namespace taskgrid::plan
