#include "escalation/shell_command.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace caretz {

namespace {

bool is_digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Splits shell text into simple commands. Unterminated quotes and substitutions run to the end
// of the text, as an interactive shell would wait for more.
class ShellLexer {
public:
    explicit ShellLexer(std::string_view text) : text_(text) {}

    ShellScan run() {
        while (pos_ < text_.size()) step(text_[pos_]);
        end_command();
        return std::move(scan_);
    }

private:
    void step(char c) {
        switch (c) {
            case ' ':
            case '\t':
                end_word();
                ++pos_;
                return;
            case '\n':
            case ';':
            case '|':
            case '(':
            case ')':
                end_command();
                ++pos_;
                return;
            case '&':
                if (next_is(1, '>')) return redirection();
                end_command();
                ++pos_;
                return;
            case '<':
            case '>':
                if (next_is(1, '(')) return process_substitution();
                return redirection();
            case '#':
                if (!in_word_) return comment();
                break;
            case '\\':
                return escaped_character();
            case '\'':
                return single_quoted();
            case '"':
                return double_quoted();
            case '$':
                return dollar();
            case '`':
                return backticks();
            default:
                break;
        }
        word_ += c;
        in_word_ = true;
        ++pos_;
    }

    bool next_is(std::size_t offset, char c) const {
        return pos_ + offset < text_.size() && text_[pos_ + offset] == c;
    }

    void redirection() {
        if (in_word_ && is_digits(word_)) {  // `2>` names a file descriptor, not a word
            word_.clear();
            in_word_ = false;
        }
        end_word();
        const bool here_document = next_is(0, '<') && next_is(1, '<');
        const bool output = next_is(0, '>');
        while (pos_ < text_.size() &&
               std::string_view("<>&").find(text_[pos_]) != std::string_view::npos)
            ++pos_;
        if ((output && next_is(0, '|')) || (here_document && next_is(0, '-'))) ++pos_;
        redirect_target_ = true;
    }

    void process_substitution() {
        ++pos_;
        scan_.substitutions.emplace_back(balanced('(', ')'));
        in_word_ = true;
    }

    void comment() {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    }

    void escaped_character() {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') {
            word_ += text_[pos_ + 1];
            in_word_ = true;
        }
        pos_ += 2;
    }

    void single_quoted() {
        const std::size_t close = text_.find('\'', pos_ + 1);
        const std::size_t end = close == std::string_view::npos ? text_.size() : close;
        word_.append(text_.substr(pos_ + 1, end - pos_ - 1));
        in_word_ = true;
        pos_ = end + 1;
    }

    void double_quoted() {
        in_word_ = true;
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '"') {
            const char c = text_[pos_];
            if (c == '\\' && pos_ + 1 < text_.size() &&
                std::string_view("$`\"\\\n").find(text_[pos_ + 1]) != std::string_view::npos) {
                if (text_[pos_ + 1] != '\n') word_ += text_[pos_ + 1];
                pos_ += 2;
            } else if (c == '$') {
                dollar();
            } else if (c == '`') {
                backticks();
            } else {
                word_ += c;
                ++pos_;
            }
        }
        ++pos_;
    }

    void dollar() {
        in_word_ = true;
        if (next_is(1, '(') && next_is(2, '(')) {  // arithmetic: no commands run
            ++pos_;
            balanced('(', ')');
        } else if (next_is(1, '(')) {
            ++pos_;
            scan_.substitutions.emplace_back(balanced('(', ')'));
        } else if (next_is(1, '{')) {
            ++pos_;
            word_ += "${";
            word_.append(balanced('{', '}'));
            word_ += '}';
        } else if (next_is(1, '\'')) {
            ++pos_;
            ansi_c_quoted();
        } else {
            word_ += '$';
            ++pos_;
        }
    }

    // $'...': backslash escapes a character; their exact meaning does not matter here.
    void ansi_c_quoted() {
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '\'') {
            if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
            word_ += text_[pos_++];
        }
        ++pos_;
    }

    void backticks() {
        in_word_ = true;
        std::string inner;
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '`') {
            if (text_[pos_] == '\\' && next_is(1, '`')) ++pos_;
            inner += text_[pos_++];
        }
        ++pos_;
        scan_.substitutions.push_back(std::move(inner));
    }

    // With pos_ on `open`: the text up to the matching `close`, skipping quoted parts; pos_
    // ends past `close`.
    std::string_view balanced(char open, char close) {
        const std::size_t start = pos_ + 1;
        int depth = 0;
        for (; pos_ < text_.size(); ++pos_) {
            const char c = text_[pos_];
            if (c == '\\') {
                ++pos_;
            } else if (c == '\'') {
                pos_ = std::min(text_.find('\'', pos_ + 1), text_.size());
            } else if (c == '"') {
                skip_double_quoted();
            } else if (c == open) {
                ++depth;
            } else if (c == close && --depth == 0) {
                return text_.substr(start, pos_++ - start);
            }
        }
        return text_.substr(std::min(start, text_.size()));
    }

    void skip_double_quoted() {
        for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; ++pos_)
            if (text_[pos_] == '\\') ++pos_;
    }

    void end_word() {
        if (!in_word_) return;
        if (redirect_target_) {
            redirect_target_ = false;
        } else {
            words_.push_back(word_);
        }
        word_.clear();
        in_word_ = false;
    }

    void end_command() {
        end_word();
        redirect_target_ = false;
        if (!words_.empty()) scan_.commands.push_back(std::move(words_));
        words_.clear();
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::string word_;
    bool in_word_ = false;
    bool redirect_target_ = false;  // the next word names a file, not an argument
    std::vector<std::string> words_;
    ShellScan scan_;
};

// How a wrapper program reads its options before the command it runs.
struct WrapperOptions {
    std::string_view name;
    std::string_view short_with_value;              // e.g. "n" for `nice -n 5`
    std::vector<std::string_view> long_with_value;  // e.g. "--adjustment"
    std::string_view short_without_command = "";    // `command -v sudo` runs nothing
    bool takes_assignments = false;                 // env NAME=value
    int positional_before_command = 0;              // timeout DURATION
};

const std::vector<WrapperOptions>& wrappers() {
    static const std::vector<WrapperOptions> list = {
        {"env", "uCS", {"--unset", "--chdir", "--split-string"}, "", true},
        {"time", "fo", {"--format", "--output"}},
        {"nice", "n", {"--adjustment"}},
        {"nohup", "", {}},
        {"exec", "a", {}},
        {"command", "", {}, "vV"},
        {"xargs",
         "aEdILnPs",
         {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars",
          "--process-slot-var"}},
        {"timeout", "sk", {"--signal", "--kill-after"}, "", false, 1},
        {"stdbuf", "ioe", {"--input", "--output", "--error"}},
    };
    return list;
}

const WrapperOptions* find_wrapper(std::string_view name) {
    for (const auto& w : wrappers())
        if (w.name == name) return &w;
    return nullptr;
}

bool is_assignment(std::string_view word) {
    const std::size_t eq = word.find('=');
    if (eq == 0 || eq == std::string_view::npos) return false;
    std::string_view name = word.substr(0, eq);
    if (name.back() == '+') name.remove_suffix(1);  // NAME+=value
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (const char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

bool is_leading_reserved_word(std::string_view word) {
    for (const char* w : {"!", "{", "if", "then", "else", "elif", "do", "while", "until"})
        if (word == w) return true;
    return false;
}

bool is_closing_reserved_word(std::string_view word) {
    for (const char* w : {"fi", "done", "esac", "}"})
        if (word == w) return true;
    return false;
}

std::string_view program_name(std::string_view word) {
    const std::size_t slash = word.rfind('/');
    return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

// The index of the command a wrapper runs, or nullopt when it runs none.
std::optional<std::size_t> wrapped_command(const WrapperOptions& wrapper,
                                           const std::vector<std::string>& words, std::size_t i) {
    while (i < words.size()) {
        const std::string_view w = words[i];
        if (w == "--") {
            ++i;
            break;
        }
        if (w.starts_with("--")) {
            bool separate_value = false;
            for (const auto& opt : wrapper.long_with_value) separate_value |= (w == opt);
            i += separate_value ? 2 : 1;
        } else if (w.size() > 1 && w[0] == '-') {
            for (std::size_t k = 1; k < w.size(); ++k) {
                if (wrapper.short_without_command.find(w[k]) != std::string_view::npos)
                    return std::nullopt;
                if (wrapper.short_with_value.find(w[k]) != std::string_view::npos) {
                    if (k + 1 == w.size()) ++i;  // the value is the next word
                    break;
                }
            }
            ++i;
        } else if (wrapper.takes_assignments && is_assignment(w)) {
            ++i;
        } else {
            break;
        }
    }
    return i + wrapper.positional_before_command;
}

bool is_shell(std::string_view name) {
    for (const char* s : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish"})
        if (name == s) return true;
    return false;
}

// The script of `bash -c SCRIPT`, `sh -ec SCRIPT`, `fish --command=SCRIPT`, if any.
std::optional<std::string> shell_script(const std::vector<std::string>& words, std::size_t i) {
    bool command_flag = false;
    for (; i < words.size(); ++i) {
        const std::string_view w = words[i];
        if (w.starts_with("--command=")) return std::string(w.substr(10));
        if (w == "--command" || w == "-c") {
            command_flag = true;
        } else if (w == "-o" || w == "-O" || w == "+o" || w == "+O" || w == "--rcfile" ||
                   w == "--init-file") {
            ++i;  // their value is not the script
        } else if (w.size() > 1 && (w[0] == '-' || w[0] == '+')) {
            command_flag |=
                w[0] == '-' && w.find('c') != std::string_view::npos && !w.starts_with("--");
        } else {
            break;
        }
    }
    if (!command_flag || i >= words.size()) return std::nullopt;
    return words[i];
}

constexpr int kMaxNesting = 8;

bool runs_sudo_nested(std::string_view command, int depth);

bool simple_command_runs_sudo(const std::vector<std::string>& words, int depth) {
    std::size_t i = 0;
    while (i < words.size() && (is_leading_reserved_word(words[i]) || is_assignment(words[i]))) ++i;
    while (i < words.size()) {
        const std::string_view name = program_name(words[i]);
        if (name == "sudo") return true;
        if (const WrapperOptions* wrapper = find_wrapper(name)) {
            const auto next = wrapped_command(*wrapper, words, i + 1);
            if (!next) return false;
            i = *next;
            continue;
        }
        if (is_shell(name)) {
            const auto script = shell_script(words, i + 1);
            return script && runs_sudo_nested(*script, depth + 1);
        }
        return false;
    }
    return false;
}

bool runs_sudo_nested(std::string_view command, int depth) {
    if (depth > kMaxNesting) return false;
    const ShellScan scan = scan_shell(command);
    for (const auto& words : scan.commands)
        if (simple_command_runs_sudo(words, depth)) return true;
    for (const auto& inner : scan.substitutions)
        if (runs_sudo_nested(inner, depth + 1)) return true;
    return false;
}

}  // namespace

ShellScan scan_shell(std::string_view text) {
    return ShellLexer(text).run();
}

bool runs_sudo(std::string_view command) {
    return runs_sudo_nested(command, 0);
}

std::vector<std::string> named_paths(std::string_view command) {
    std::vector<std::string> paths;
    constexpr std::string_view kDelimiters = " \t\n'\"`(),;<>|&=";
    for (std::size_t start = command.find_first_not_of(kDelimiters);
         start != std::string_view::npos;) {
        std::size_t end = command.find_first_of(kDelimiters, start);
        if (end == std::string_view::npos) end = command.size();
        const std::string_view word = command.substr(start, end - start);
        const bool path = word.starts_with('/') || word.starts_with("~/") ||
                          word.starts_with("$HOME/") || word.starts_with("${HOME}/");
        if (path && std::find(paths.begin(), paths.end(), word) == paths.end())
            paths.emplace_back(word);
        start = command.find_first_not_of(kDelimiters, end);
    }
    return paths;
}

namespace {

bool simple_command_uses_session_bus(const std::vector<std::string>& words) {
    std::size_t start = 0;
    while (start < words.size() &&
           (is_leading_reserved_word(words[start]) || is_assignment(words[start])))
        ++start;
    if (start == words.size()) return false;
    const std::string_view name = program_name(words[start]);
    auto has = [&](std::string_view word) {
        return std::find(words.begin() + static_cast<std::ptrdiff_t>(start), words.end(), word) !=
               words.end();
    };
    if (name == "systemctl" || name == "busctl" || name == "journalctl" || name == "loginctl")
        return has("--user");
    if (name == "gdbus" || name == "dbus-monitor") return has("--session");
    if (name == "dbus-send") return !has("--system");
    if (name == "brew") return has("services");
    return name == "gsettings" || name == "dconf";
}

}  // namespace

bool uses_session_bus(std::string_view command) {
    const ShellScan scan = scan_shell(command);
    for (const auto& words : scan.commands)
        if (simple_command_uses_session_bus(words)) return true;
    for (const auto& inner : scan.substitutions)
        if (uses_session_bus(inner)) return true;
    return false;
}

std::vector<DirectoryArgument> directory_arguments(std::string_view command) {
    std::vector<DirectoryArgument> found;
    for (const auto& words : scan_shell(command).commands) {
        std::size_t start = 0;
        while (start < words.size() &&
               (is_leading_reserved_word(words[start]) || is_assignment(words[start])))
            ++start;
        // A closing word ends a compound command and runs nothing.
        if (start == words.size() || is_closing_reserved_word(words[start])) continue;
        const std::string_view name = program_name(words[start]);
        if (name == "cd" || name == "pushd") {
            for (std::size_t i = start + 1; i < words.size(); ++i) {
                if (words[i] == "--" || (words[i].starts_with('-') && words[i].size() > 1))
                    continue;
                found.push_back({words[i], true});
                break;
            }
            continue;
        }
        constexpr std::string_view kLong = "--directory=";
        DirectoryArgument program{"", false};
        for (std::size_t i = start + 1; i < words.size(); ++i) {
            const std::string& word = words[i];
            const bool takes_next = word == "-C" || word == "--directory";
            if (takes_next && i + 1 < words.size()) {
                program.dir = words[++i];
            } else if (word.starts_with("-C") && word.size() > 2) {
                program.dir = word.substr(2);
            } else if (word.starts_with(kLong) && word.size() > kLong.size()) {
                program.dir = word.substr(kLong.size());
            }
        }
        found.push_back(std::move(program));
    }
    return found;
}

}  // namespace caretz
