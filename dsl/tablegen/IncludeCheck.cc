//===- IncludeCheck.cc - which files a TableGen rule file may include ----===//
#include "dsl/tablegen/IncludeCheck.h"

#include <sys/stat.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <set>

#include "dsl/RegularFileText.h"

namespace onnx_rewrite::tablegen {
namespace {

std::string realPath(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

std::string folderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// An `include "name"` directive and where its keyword starts.
struct Include {
  std::string name;
  uint32_t line = 0, col = 0;
};

/// The includes of one file, found with as much of TableGen's lexer as tells code from
/// comments, strings and code blocks. Also the first bracket nested too deep, if any.
struct Scan {
  std::vector<Include> includes;
  uint32_t deep_line = 0, deep_col = 0;
};

Scan scan(const std::string& text) {
  Scan out;
  uint32_t line = 1, col = 1;
  size_t i = 0;
  int depth = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < text.size(); ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto at = [&](const char* s) {
    return text.compare(i, std::char_traits<char>::length(s), s) == 0;
  };
  auto skipString = [&] {  // at the opening quote; strings end at the quote or the line
    advance(1);
    while (i < text.size() && text[i] != '"' && text[i] != '\n') advance(text[i] == '\\' ? 2 : 1);
    advance(1);
  };
  while (i < text.size()) {
    if (at("//")) {
      while (i < text.size() && text[i] != '\n') advance(1);
    } else if (at("/*")) {  // TableGen's block comments nest
      int comments = 0;
      do {
        if (at("/*")) {
          ++comments;
          advance(2);
        } else if (at("*/")) {
          --comments;
          advance(2);
        } else {
          advance(1);
        }
      } while (i < text.size() && comments > 0);
    } else if (at("[{")) {  // a code block: text up to "}]"
      while (i < text.size() && !at("}]")) advance(1);
      advance(2);
    } else if (text[i] == '"') {
      skipString();
    } else if (at("include") &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      Include inc;
      inc.line = line;
      inc.col = col;
      advance(7);
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) advance(1);
      if (i < text.size() && text[i] == '"') {
        advance(1);
        while (i < text.size() && text[i] != '"' && text[i] != '\n') {
          if (text[i] == '\\' && i + 1 < text.size()) advance(1);
          inc.name += text[i];
          advance(1);
        }
        advance(1);
        out.includes.push_back(std::move(inc));
      }
    } else if (text[i] == '(' || text[i] == '[' || text[i] == '{') {
      if (++depth > kMaxBracketNesting && out.deep_line == 0) {
        out.deep_line = line;
        out.deep_col = col;
      }
      advance(1);
    } else if (text[i] == ')' || text[i] == ']' || text[i] == '}') {
      if (depth > 0) --depth;
      advance(1);
    } else {
      advance(1);
    }
  }
  return out;
}

class Checker {
 public:
  Checker(const std::string& path, const std::vector<std::string>& include_dirs,
          DiagnosticEngine& diag)
      : include_dirs_(include_dirs), diag_(diag) {
    for (const std::string& dir : include_dirs)
      if (std::string real = realPath(dir); !real.empty()) allowed_.push_back(real);
    if (std::string real = realPath(folderOf(path)); !real.empty()) allowed_.push_back(real);
  }

  /// Checks `file` (named `shown` in messages, whose text is `text`) and what it includes.
  void check(const std::string& shown, const std::string& text) {
    const Scan s = scan(text);
    if (s.deep_line != 0)
      diag_.error(ir::SourceLoc{shown, s.deep_line, s.deep_col},
                  "brackets nested deeper than " + std::to_string(kMaxBracketNesting) +
                      " levels (TableGen's parser would run out of stack)");
    for (const Include& inc : s.includes) include(shown, inc);
  }

  void enter(const std::string& real) { stack_.push_back(real); }
  void leave() { stack_.pop_back(); }
  bool ok() const { return ok_; }

 private:
  /// Where TableGen (LLVM 14's SourceMgr) finds `name`: as given (absolute, or relative to
  /// the working folder), else in each include folder in turn; an entry that is a folder
  /// does not read, so the search goes on. Empty when nothing is found.
  std::string resolve(const std::string& name) const {
    std::vector<std::string> candidates = {name};
    for (const std::string& dir : include_dirs_) candidates.push_back(dir + "/" + name);
    for (const std::string& c : candidates) {
      struct stat st {};
      if (::stat(c.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return c;
    }
    return {};
  }

  bool inside(const std::string& real) const {
    for (const std::string& root : allowed_) {
      const std::string prefix = root == "/" ? root : root + "/";
      if (real.compare(0, prefix.size(), prefix) == 0) return true;
    }
    return false;
  }

  void include(const std::string& from, const Include& inc) {
    const ir::SourceLoc loc{from, inc.line, inc.col};
    auto fail = [&](const std::string& message) {
      diag_.error(loc, message);
      ok_ = false;
    };
    const std::string found = resolve(inc.name);
    if (found.empty()) return;  // TableGen reports the missing file itself
    const std::string real = realPath(found);
    std::string text, error;
    if (real.empty() || !readRegularFileIfRegular(found, text, error)) {
      fail("include \"" + inc.name + "\": '" + found + "' " +
           (error.empty() ? "does not resolve" : error));
      return;
    }
    if (!inside(real)) {
      fail("include \"" + inc.name + "\" resolves to '" + real +
           "', outside the rule file's folder, the -I folders and the shipped dsl/td");
      return;
    }
    for (size_t k = 0; k < stack_.size(); ++k)
      if (stack_[k] == real) {
        fail(k + 1 == stack_.size() ? "include \"" + inc.name + "\": the file includes itself"
                                    : "include \"" + inc.name + "\" closes an include cycle");
        return;
      }
    if (static_cast<int>(stack_.size()) >= kMaxIncludeDepth) {
      fail("include \"" + inc.name + "\": includes nested deeper than " +
           std::to_string(kMaxIncludeDepth) + " files");
      return;
    }
    if (!done_.insert(real).second) return;  // a file several files include: checked once
    diag_.addSource(found, text);
    enter(real);
    check(found, text);
    leave();
  }

  /// readRegularFile, saying "is not a regular file (a device or FIFO)" for those.
  static bool readRegularFileIfRegular(const std::string& path, std::string& text,
                                       std::string& error) {
    if (readRegularFile(path, text, error)) return true;
    if (error == "is not a regular file") error = "is not a regular file (a device or FIFO)";
    return false;
  }

  std::vector<std::string> include_dirs_;
  std::vector<std::string> allowed_;
  DiagnosticEngine& diag_;
  std::vector<std::string> stack_;
  std::set<std::string> done_;
  bool ok_ = true;
};

}  // namespace

bool checkIncludes(const std::string& path, const std::vector<std::string>& include_dirs,
                   DiagnosticEngine& diag) {
  std::string text, error;
  if (!readRegularFile(path, text, error)) return true;  // the caller reports an unreadable file
  Checker checker(path, include_dirs, diag);
  const unsigned errors = diag.errorCount();
  checker.enter(realPath(path));
  checker.check(path, text);
  checker.leave();
  return checker.ok() && diag.errorCount() == errors;
}

}  // namespace onnx_rewrite::tablegen
