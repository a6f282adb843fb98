#include "validator.h"

namespace nitr::case023 {

bool Validator::validate(const Submission& s) const {
  if (s.content.empty()) {
    return false;
  }
  return !s.is_late;
}

}  // namespace nitr::case023
