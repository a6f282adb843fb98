#pragma once

#include <string>
#include <vector>

namespace nitr::case013 {

struct Book {
  std::string id;
  std::string title;
  std::string author;
  bool archived = false;
};

class CatalogService {
 public:
  std::vector<std::string> FindAvailableTitles(const std::vector<Book>& books,
                                               const std::string& prefix,
                                               bool include_archived = false) const;

  std::string BuildCatalogDigest(const std::vector<Book>& books,
                                 bool include_archived = false) const;
};

}  // namespace nitr::case013
