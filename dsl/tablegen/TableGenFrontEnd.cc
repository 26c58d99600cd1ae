//===- TableGenFrontEnd.cc - TableGen rule files to Rule IR ---------------===//
//
// LLVM 14 installs no header for TGParser, so the file is parsed the way
// llvm-tblgen does it: llvm::TableGenMain, with its input file and include
// folders set through its registered command-line options, calls back with
// the RecordKeeper, and RecordConverter turns the records into Rule IR.
// TableGen reports through the global SourceMgr; a handler on it forwards each
// message to our DiagnosticEngine.
//
// All of that happens in a child process: TableGen's globals (SrcMgr, the
// options, and the static uniquing pools of Record.cpp, which cache
// instantiated anonymous records keyed by the address of their class, so a
// later parse whose class lands on a freed address reads a freed record) make
// a second parse in one process unsafe, and PrintFatalError calls exit(). The
// child sends each diagnostic as it is reported and then the RuleFile
// (RuleFileWire.h); the caller replays them into its engine.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/TableGenFrontEnd.h"

#include <fcntl.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TableGen/Error.h>
#include <llvm/TableGen/Main.h>
#include <llvm/TableGen/Record.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "dsl/RegularFileText.h"
#include "dsl/tablegen/IncludeCheck.h"
#include "dsl/tablegen/RecordConverter.h"
#include "dsl/tablegen/RuleFileWire.h"

namespace onnx_rewrite {
namespace {

/// The child's exit status when LLVM ends it through exit() (PrintFatalError).
constexpr int kFatalExit = 70;

//===----------------------------------------------------------------------===//
// Messages from the parse process
//===----------------------------------------------------------------------===//

/// A message on the pipe: a tag byte, a 64-bit payload length, the payload.
enum class MessageTag : char { kDiagnostic = 'D', kRuleFile = 'R' };

/// Writes framed messages to the child's end of the pipe, unbuffered, so a message sent
/// before a fatal error arrives.
class MessageSink {
 public:
  explicit MessageSink(int fd) : fd_(fd) {}

  void send(MessageTag tag, const std::string& payload) {
    std::string frame(1, static_cast<char>(tag));
    uint64_t size = payload.size();
    frame.append(reinterpret_cast<const char*>(&size), sizeof size);
    frame += payload;
    const char* p = frame.data();
    size_t left = frame.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the caller is gone; nothing to report to
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

//===----------------------------------------------------------------------===//
// The parse (in the child process)
//===----------------------------------------------------------------------===//

/// What the TableGenMain callback needs (TableGenMain takes a plain function pointer).
struct ParseJob {
  std::string path;
  ir::RuleFile* out = nullptr;
  DiagnosticEngine* diag = nullptr;
  bool converted = false;
};

ParseJob* g_job = nullptr;

/// TableGenMain's callback: converts the records. Returns true ("failed") so TableGenMain
/// writes no output file.
bool convertParsedRecords(llvm::raw_ostream&, llvm::RecordKeeper& records) {
  g_job->converted = true;
  tablegen::convertRecords(records, llvm::SrcMgr, g_job->path, *g_job->out, *g_job->diag);
  return true;
}

std::string trimEnd(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

bool isIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// True if `line` has `(name [`: a list right after a dag operator.
bool hasListAfterOperator(const std::string& line) {
  for (size_t open = line.find('('); open != std::string::npos; open = line.find('(', open + 1)) {
    size_t p = open + 1;
    while (p < line.size() && line[p] == ' ') ++p;
    size_t name = p;
    while (p < line.size() && isIdentifierChar(line[p])) ++p;
    if (p == name) continue;
    while (p < line.size() && line[p] == ' ') ++p;
    if (p < line.size() && line[p] == '[') return true;
  }
  return false;
}

/// The names `keyword` (def, class) introduces at the start of a line, followed by
/// `marker` (" : Op<"), in the files TableGen loaded so far (onnx_rewrite/Ops.td declares
/// every op and attribute name so, onnx_rewrite/Rule.td the classes).
std::vector<std::string> definedNames(const std::string& keyword, const std::string& marker) {
  std::vector<std::string> names;
  const std::string start = keyword + " ";
  for (unsigned i = 1; i <= llvm::SrcMgr.getNumBuffers(); ++i) {
    const llvm::StringRef text = llvm::SrcMgr.getMemoryBuffer(i)->getBuffer();
    for (size_t at = text.find(start); at != llvm::StringRef::npos;
         at = text.find(start, at + start.size())) {
      if (at > 0 && text[at - 1] != '\n') continue;
      const size_t begin = at + start.size();
      size_t end = begin;
      while (end < text.size() && isIdentifierChar(text[end])) ++end;
      if (end > begin && text.substr(end).startswith(marker))
        names.push_back(text.substr(begin, end - begin).str());
    }
  }
  return names;
}

/// "did you mean 'x'? " for the candidate nearest to `name` (a plausible typo: at most 2
/// edits, and at most a third of the name), else "".
std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  unsigned best_distance = 3;
  for (const std::string& candidate : candidates) {
    const unsigned d = llvm::StringRef(name).edit_distance(candidate, true, best_distance);
    if (d < best_distance && d * 3 <= name.size()) {
      best = candidate;
      best_distance = d;
    }
  }
  return best.empty() ? "" : "did you mean '" + best + "'? ";
}

/// A note for TableGen errors that rule authors meet because of TableGen's syntax, or "".
std::string syntaxHint(const llvm::SMDiagnostic& d) {
  const std::string message = d.getMessage().str();
  const std::string line = d.getLineContents().str();
  const int col = d.getColumnNo();
  if (col < 0 || static_cast<size_t>(col) > line.size()) return "";
  const std::string before = line.substr(0, static_cast<size_t>(col));
  auto mentions = [&message](const char* word) { return message.find(word) != std::string::npos; };
  if ((mentions("range") || mentions("slice")) && hasListAfterOperator(line))
    return "a list cannot be a dag's first argument (TableGen reads `axes [-1]` as a slice "
           "of axes): write (axes (ints -1)), (floats ...) or (strings ...)";
  if (mentions("after '.'") && before.size() >= 2 && before.back() == '.' &&
      std::isdigit(static_cast<unsigned char>(before[before.size() - 2])))
    return "TableGen has no float literals: write (f \"2.5\"), or \"2.5\" where a number is "
           "given as a string";
  const std::string undefined = "Variable not defined: '";
  if (message.rfind(undefined, 0) == 0 && message.size() > undefined.size() + 1 &&
      message.back() == '\'') {
    const std::string n = message.substr(undefined.size(), message.size() - undefined.size() - 1);
    if (!std::all_of(n.begin(), n.end(), isIdentifierChar)) return "";
    if (std::isupper(static_cast<unsigned char>(n[0])))
      return didYouMean(n, definedNames("def", " : Op<")) +
             "ops are records from onnx_rewrite/Ops.td (com.microsoft ops have the prefix Ms, "
             "as in MsGelu); declare another op with def " +
             n + " : Op<\"" + n + "\", \"my.domain\">";
    return didYouMean(n, definedNames("def", " : AttrName<")) +
           "attribute names are records from onnx_rewrite/Ops.td; declare another with def " + n +
           " : AttrName<\"" + n + "\">";
  }
  // The classes rules are written with come from one include.
  const std::string no_class = "Couldn't find class '";
  if (message.rfind(no_class, 0) == 0 && message.back() == '\'') {
    std::vector<std::string> classes = definedNames("class", "");
    if (std::find(classes.begin(), classes.end(), "Rule") == classes.end())
      return "rules, fragments, constraints and variants are classes of onnx_rewrite/Rule.td: "
             "start the file with include \"onnx_rewrite/Rule.td\"";
    const std::string n = message.substr(no_class.size(), message.size() - no_class.size() - 1);
    const std::string guess = didYouMean(n, classes);
    if (!guess.empty()) return guess.substr(0, guess.size() - 1);
  }
  return "";
}

/// SourceMgr's handler: TableGen's own messages into the DiagnosticEngine.
void forwardDiagnostic(const llvm::SMDiagnostic& d, void* context) {
  auto* job = static_cast<ParseJob*>(context);
  Diagnostic out;
  switch (d.getKind()) {
    case llvm::SourceMgr::DK_Error:
      out.severity = Diagnostic::Severity::kError;
      break;
    case llvm::SourceMgr::DK_Warning:
      out.severity = Diagnostic::Severity::kWarning;
      break;
    case llvm::SourceMgr::DK_Remark:
    case llvm::SourceMgr::DK_Note:
      out.severity = Diagnostic::Severity::kNote;
      break;
  }
  out.loc.file =
      d.getFilename().empty() || d.getFilename() == "<unknown>" ? job->path : d.getFilename().str();
  if (d.getLineNo() > 0) {
    out.loc.line = static_cast<uint32_t>(d.getLineNo());
    out.loc.col = d.getColumnNo() >= 0 ? static_cast<uint32_t>(d.getColumnNo()) + 1 : 0;
  }
  out.message = trimEnd(d.getMessage().str());
  job->diag->report(out);
  if (out.severity == Diagnostic::Severity::kError)
    if (std::string hint = syntaxHint(d); !hint.empty()) job->diag->note(out.loc, hint);
}

/// Sets TableGenMain's input file and include folders through its registered options
/// (a fresh occurrence each, as if given on a command line).
bool setTableGenOptions(const std::string& path, const std::vector<std::string>& include_dirs) {
  llvm::cl::Option* input = nullptr;
  for (llvm::cl::Option* o : llvm::cl::TopLevelSubCommand->PositionalOpts)
    if (o->HelpStr == "<input file>") input = o;
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto includes = options.find("I");
  if (!input || includes == options.end()) return false;
  input->reset();
  // "-" would read standard input.
  if (input->addOccurrence(0, "", path == "-" ? "./-" : path)) return false;
  includes->second->reset();
  for (const std::string& dir : include_dirs)
    if (includes->second->addOccurrence(0, "I", dir)) return false;
  return true;
}

/// Parses and converts in this process. Run once per process (see the file comment).
void parseHere(const std::string& path, const std::vector<std::string>& include_dirs,
               ir::RuleFile& out, DiagnosticEngine& diag) {
  ParseJob job;
  job.path = path;
  job.out = &out;
  job.diag = &diag;
  llvm::SrcMgr = llvm::SourceMgr();
  llvm::SrcMgr.setDiagHandler(forwardDiagnostic, &job);
  llvm::ErrorsPrinted = 0;
  if (!setTableGenOptions(path, include_dirs)) {
    diag.error(ir::SourceLoc{path, 0, 0},
               "internal error: LLVM TableGen's command-line options are not registered");
    return;
  }
  unsigned errors = diag.errorCount();
  g_job = &job;
  llvm::TableGenMain("onnx-rewrite", &convertParsedRecords);
  g_job = nullptr;
  if (!job.converted && diag.errorCount() == errors)
    diag.error(ir::SourceLoc{path, 0, 0}, "TableGen could not parse the file");
}

/// The child: parse, send diagnostics as they come and then the RuleFile, exit.
[[noreturn]] void runChild(int fd, const std::string& path,
                           const std::vector<std::string>& include_dirs) {
  // Runs first at exit(): LLVM's PrintFatalError ends the child without running the
  // parent's exit handlers.
  std::atexit([] { ::_exit(kFatalExit); });
  MessageSink sink(fd);
  DiagnosticEngine diag;
  diag.setHandler([&sink](const Diagnostic& d) {
    std::string payload;
    tablegen::encodeDiagnostic(d, payload);
    sink.send(MessageTag::kDiagnostic, payload);
  });
  ir::RuleFile file;
  parseHere(path, include_dirs, file, diag);
  std::string payload;
  tablegen::encodeRuleFile(file, payload);
  sink.send(MessageTag::kRuleFile, payload);
  ::_exit(0);
}

//===----------------------------------------------------------------------===//
// The caller's side
//===----------------------------------------------------------------------===//

/// Reads `fd` to its end.
std::string readAll(int fd) {
  std::string data;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

/// Why the child ended, for a message.
std::string describeStatus(int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == kFatalExit)
    return "LLVM TableGen stopped at a fatal error";
  if (WIFEXITED(status))
    return "the parse process exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "the parse process was killed by signal " + std::to_string(WTERMSIG(status));
  return "the parse process ended unexpectedly";
}

}  // namespace

bool parseTableGenRules(const std::string& path, const std::vector<std::string>& include_dirs,
                        ir::RuleFile& out, DiagnosticEngine& diag) {
  const ir::SourceLoc file_loc{path, 0, 0};
  std::string text, error;
  if (!readRegularFile(path, text, error)) {
    diag.error(file_loc, cannotReadRuleFile(error));
    return false;
  }
  diag.addSource(path, text);
  // TableGen would open any include (/dev/zero, the file itself): check them first. Files
  // next to the rule file are found wherever rulec runs.
  std::vector<std::string> includes = include_dirs;
  const size_t slash = path.rfind('/');
  includes.push_back(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  if (!tablegen::checkIncludes(path, includes, diag)) return false;

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    diag.error(file_loc, std::string("cannot start the TableGen parser: ") + std::strerror(errno));
    return false;
  }
  // Unwritten buffered output would otherwise be written twice if the child exits.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    diag.error(file_loc, std::string("cannot start the TableGen parser: ") + std::strerror(errno));
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    runChild(fds[1], path, includes);
  }
  ::close(fds[1]);
  std::string stream = readAll(fds[0]);
  ::close(fds[0]);
  int status = 0;
  bool waited = false;
  while (true) {
    if (::waitpid(pid, &status, 0) == pid) {
      waited = true;
      break;
    }
    if (errno != EINTR) break;
  }

  unsigned errors = 0;
  bool finished = false;
  std::string_view rest(stream);
  while (rest.size() >= 1 + sizeof(uint64_t)) {
    char tag = rest[0];
    uint64_t size = 0;
    std::memcpy(&size, rest.data() + 1, sizeof size);
    rest.remove_prefix(1 + sizeof size);
    if (rest.size() < size) break;
    std::string_view payload = rest.substr(0, size);
    rest.remove_prefix(size);
    if (tag == static_cast<char>(MessageTag::kDiagnostic)) {
      Diagnostic d;
      if (!tablegen::decodeDiagnostic(payload, d)) break;
      if (d.severity == Diagnostic::Severity::kError) ++errors;
      diag.report(d);
    } else if (tag == static_cast<char>(MessageTag::kRuleFile)) {
      ir::RuleFile file;
      if (!tablegen::decodeRuleFile(payload, file)) break;
      for (ir::Rule& r : file.rules) out.rules.push_back(std::move(r));
      for (ir::OpDecl& d : file.ops) out.ops.push_back(std::move(d));
      for (ir::Fragment& f : file.fragments) out.fragments.push_back(std::move(f));
      finished = true;
    }
  }
  if (!finished) {
    diag.error(file_loc, waited ? describeStatus(status) : "the parse process ended unexpectedly");
    return false;
  }
  return errors == 0;
}

}  // namespace onnx_rewrite
