#pragma once

namespace nitr::case023 {

extern int total_processed;
extern int total_validated;

}  // namespace nitr::case023
