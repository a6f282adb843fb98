#include "validator.h"

#include "stats.h"

namespace nitr::case023 {

bool Validator::validate(const Submission& s) const {
  const bool eligible = !s.content.empty() && !s.is_late;
  if (eligible) {
    ++total_validated;
  }
  return eligible;
}

}  // namespace nitr::case023
