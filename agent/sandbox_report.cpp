#include "agent/sandbox_report.h"

#include <nlohmann/json.hpp>

#include "escalation/offer.h"

namespace caretz {

namespace {

std::string line(const SourcedValue& v) {
    return "  " + shown_escaped(v.value) + "  [" + shown_escaped(v.source) + "]\n";
}

std::string setting(const std::string& name, const SourcedValue& v) {
    std::string label = name + ":";
    label.resize(std::max<size_t>(label.size() + 1, 22), ' ');
    return label + shown_escaped(v.value) + "  [" + shown_escaped(v.source) + "]\n";
}

std::string section(const std::string& heading, const std::vector<SourcedValue>& values) {
    std::string out = heading + "\n";
    if (values.empty()) out += "  (none)\n";
    for (const auto& v : values) out += line(v);
    return out;
}

nlohmann::json sourced(const SourcedValue& v) {
    return {{"value", v.value}, {"source", v.source}};
}

nlohmann::json sourced_list(const std::vector<SourcedValue>& values) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : values) list.push_back(sourced(v));
    return list;
}

}  // namespace

std::vector<SourcedValue> writable_now(const SandboxReport& report) {
    if (!report.plan_mode) return report.writable;
    for (const auto& root : report.writable)
        if (root.value == kPrivateTmp) return {{root.value, root.source + "; plan mode"}};
    return {};
}

std::string report_text(const SandboxReport& report) {
    std::string t = "The sandbox for " + shown_escaped(report.workspace) +
                    " (what set each value is in brackets)\n";
    t += setting("Profile", report.profile.value.empty()
                                ? SourcedValue{"none", report.profile.source}
                                : report.profile);
    t += setting("Plan mode", {report.plan_mode ? "on (read-only, nothing runs outside)" : "off",
                               report.plan_mode_source});
    t += setting("Docker socket",
                 {report.allow_docker.value == "on" ? "given (--allow-docker)" : "not given",
                  report.allow_docker.source});
    t += setting("Offer to run outside", report.ask_sandbox_off);
    t += setting("Permission timeout",
                 report.permission_timeout.value.empty()
                     ? SourcedValue{"none (waits for an answer)", report.permission_timeout.source}
                     : report.permission_timeout);
    t += setting("Notify", report.notify);
    t += section("Writable:", writable_now(report));
    t += section("Read-only inside writable roots (protected repositories and config):",
                 report.read_only);
    t += "What the host runs later, in the writable roots:\n";
    if (report.host_run.empty()) t += "  (none)\n";
    for (const auto& h : report.host_run)
        t += "  " + shown_escaped(h.path) + "  " + shown_escaped(h.protection) + "  [" +
             shown_escaped(h.source) + "]\n";
    t += section("Sealed (nothing can be made at their top):", report.sealed);
    t += section("Hidden (they look missing):", report.hidden);
    t += setting("Private cache layer", report.cache_layer);
    if (!report.cache_store.empty())
        t += "  " + shown_escaped(report.cache_store) +
             (report.cache_size ? ", " + std::to_string(*report.cache_size) + " bytes" : "") + "\n";
    t += section("Caches through the layer (the sandbox's writes stay in it):", report.caches);
    if (!report.visible.empty()) t += section("Hidden by default, given back:", report.visible);
    t += section("Environment added:", report.env_added);
    t += section("Environment removed:", report.env_removed);
    t += section("Network allowed:", report.allowed_domains);
    t += section("Network denied:", report.denied_domains);
    if (report.session_network_allowances) {
        t += "Network allowed for this session:\n";
        if (report.session_network_allowances->empty()) t += "  (none)\n";
        for (const auto& d : *report.session_network_allowances)
            t += "  " + shown_escaped(d) + "  [you, at the network approval]\n";
    }
    return t;
}

std::string report_json(const SandboxReport& report) {
    nlohmann::json host_run = nlohmann::json::array();
    for (const auto& h : report.host_run)
        host_run.push_back({{"path", h.path}, {"protection", h.protection}, {"source", h.source}});
    nlohmann::json out = {
        {"workspace", report.workspace},
        {"profile",
         {{"value", report.profile.value.empty() ? nlohmann::json(nullptr)
                                                 : nlohmann::json(report.profile.value)},
          {"source", report.profile.source}}},
        {"plan_mode", {{"value", report.plan_mode}, {"source", report.plan_mode_source}}},
        {"allow_docker",
         {{"value", report.allow_docker.value == "on"}, {"source", report.allow_docker.source}}},
        {"ask_sandbox_off",
         {{"value", report.ask_sandbox_off.value == "on"},
          {"source", report.ask_sandbox_off.source}}},
        {"permission_timeout",
         {{"value", report.permission_timeout.value.empty()
                        ? nlohmann::json(nullptr)
                        : nlohmann::json(report.permission_timeout.value)},
          {"source", report.permission_timeout.source}}},
        {"notify", sourced(report.notify)},
        {"writable", sourced_list(writable_now(report))},
        {"read_only", sourced_list(report.read_only)},
        {"host_run", host_run},
        {"sealed", sourced_list(report.sealed)},
        {"hidden", sourced_list(report.hidden)},
        {"cache_layer",
         {{"value", report.cache_layer.value},
          {"source", report.cache_layer.source},
          {"store", report.cache_store},
          {"size",
           report.cache_size ? nlohmann::json(*report.cache_size) : nlohmann::json(nullptr)},
          {"caches", sourced_list(report.caches)}}},
        {"visible", sourced_list(report.visible)},
        {"env_added", sourced_list(report.env_added)},
        {"env_removed", sourced_list(report.env_removed)},
        {"network",
         {{"allowed", sourced_list(report.allowed_domains)},
          {"denied", sourced_list(report.denied_domains)}}}};
    if (report.session_network_allowances)
        out["network"]["session_allowances"] = *report.session_network_allowances;
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace caretz
