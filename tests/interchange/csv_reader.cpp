#include "csv_reader.h"

namespace fusionscope::testing {

Rows read_csv(const std::string& text) {
  Rows rows(1);
  std::string field;
  bool quoted = false, row_has_data = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      row_has_data = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      row_has_data = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      row_has_data = false;
    } else {
      field += c;
      row_has_data = true;
    }
  }
  if (row_has_data) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

}  // namespace fusionscope::testing
