#!/usr/bin/env bash
# Benchmark (not a test): compile and render times of one APNs template (six calls: text, a
# clip with '...', a number, URL encoding in a concatenation), with the RichPushTemplates
# sources built alone with -O (seconds, not a release build of the server).
# Usage: scripts/bench-templates.sh [--renders N (1000000)]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_swift
private_tmp bench-templates

renders=1000000
while [ $# -gt 0 ]; do
    case "$1" in
        --renders) renders="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d "$TMPDIR/run-XXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/main.swift" <<'SWIFT'
import Foundation

@main struct TemplatesBench {
    static func main() throws {
        let renders = Int(CommandLine.arguments[1])!
        let body = ##"{"aps": {"alert": {"title": "$(title)", "body": ".(body, 120)"}, "badge": "#(badge)", "sound": "default", "mutable-content": 1}, "richId": "$(richId)", "url": "{'https://example.com/rich/' + %(richId) + '?lang=' + $(lang)}"}"##
        let compileStart = ContinuousClock.now
        var template = try Template(body)
        for _ in 1..<10_000 { template = try Template(body) }
        let compile = (ContinuousClock.now - compileStart) / 10_000
        for (label, text) in [("short body", "Something happened."), ("body clipped", String(repeating: "Something happened somewhere. ", count: 6))] {
            let properties = try TemplateProperties(["title": "Breaking news", "body": text, "badge": "3", "richId": "42", "lang": "fr-CA"])
            var buffer: [UInt8] = []
            var bytes = 0
            let start = ContinuousClock.now
            for _ in 0..<renders {
                buffer.removeAll(keepingCapacity: true)
                _ = try template.render(into: &buffer, properties)
                bytes &+= buffer.count
            }
            let each = (ContinuousClock.now - start) / renders
            print("render, \(label): \(nanoseconds(each)) ns per push (\(buffer.count) bytes)")
        }
        print("compile: \(nanoseconds(compile) / 1000) µs per template")
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
    }
}
SWIFT
swiftc -O -package-name RichPush -module-name TemplatesBench -parse-as-library \
    $(find Sources/RichPushTemplates -name '*.swift') "$work/main.swift" -o "$work/bench"
"$work/bench" "$renders"
