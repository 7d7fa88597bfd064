import Foundation
import Testing

@testable import RichPushTemplates

/// 10,000 generated templates, from a fixed seed: each one either compiles and then renders to
/// valid JSON holding no `$(`, `#(`, `.(` or `%(`, or is refused with an error that names a
/// place in the body. Never a crash, never an unrendered expression.
@Suite("Fuzzing")
struct FuzzTests {
    static let openers = ["$(", "#(", ".(", "%("]

    /// Values with every kind of character JSON escapes, numbers, and text that looks like
    /// expressions (data is never expanded, so it may come out as it went in).
    static let hostileValues = [
        "", "\"", "\\", "\u{0}\u{1F}", "line\nbreak\ttab", "😀👩‍👩‍👧‍👦🇫🇷", "e\u{301}", "40", "3.25e2", "-1", "01",
        String(repeating: "long ", count: 60), "\u{2028}\u{2029}", "</script>", "100%", "'", "{}", "+",
    ]

    @Test func tenThousandTemplates() throws {
        var fuzzer = TemplateFuzzer(random: SeededGenerator(seed: 0x5EED_1234))
        var random = SeededGenerator(seed: 42)
        var compiled = 0
        var refused: [TemplateError.Code: Int] = [:]
        for iteration in 0..<10_000 {
            let body = fuzzer.body()
            let template: Template
            do {
                template = try Template(body)
            } catch {
                refused[error.code, default: 0] += 1
                #expect(
                    error.location.line >= 1 && error.location.column >= 1 && error.location.offset <= body.utf8.count,
                    "\(iteration): \(error)")
                #expect(error.pointer.isEmpty || error.pointer.hasPrefix("/"), "\(iteration): \(error)")
                continue
            }
            compiled += 1
            // What compiles is itself valid JSON: expressions live in strings.
            #expect(Self.jsonObject(body) != nil, "\(iteration): template is not JSON: \(body)")

            // Plain values: the output holds no opener anywhere.
            let safe = Dictionary(uniqueKeysWithValues: template.propertyNames.map { ($0, Self.plainValue(&random)) })
            let output = try template.render(TemplateProperties(safe)).text
            let object = Self.jsonObject(output)
            #expect(object != nil, "\(iteration): not JSON: \(body) → \(output)")
            for opener in Self.openers {
                #expect(!output.contains(opener), "\(iteration): \(opener) in \(output) from \(body)")
                #expect(!Self.strings(in: object).contains { $0.contains(opener) }, "\(iteration): \(opener) decoded from \(output)")
            }

            // Hostile values and missing ones: still JSON.
            let hostile = Dictionary(uniqueKeysWithValues: template.propertyNames.map { ($0, random.pick(Self.hostileValues)) })
            let rough = try template.render(TemplateProperties(hostile)).text
            #expect(Self.jsonObject(rough) != nil, "\(iteration): not JSON: \(body) → \(rough)")
            // Empty values join what is around them: still no opener.
            let empty = try template.render(.none, missing: .empty).text
            #expect(Self.jsonObject(empty) != nil, "\(iteration): not JSON: \(body) → \(empty)")
            for opener in Self.openers {
                #expect(
                    !Self.strings(in: Self.jsonObject(empty)).contains { $0.contains(opener) },
                    "\(iteration): \(opener) decoded from \(empty)")
            }

            // With nothing to go on, `.fail` names a property the template uses.
            do {
                let rendered = try template.render(.none, missing: .fail)
                #expect(template.propertyNames.isEmpty, "\(iteration): rendered \(rendered.text) without properties")
            } catch {
                #expect(template.propertyNames.contains(ExpressionSyntax.fold(error.property)), "\(iteration): \(error)")
            }
        }
        // The generator reaches both sides, and most of the refusals.
        #expect(compiled > 3_000, "\(compiled) compiled")
        #expect(10_000 - compiled > 2_000, "\(10_000 - compiled) refused")
        #expect(refused.count >= 10, "\(refused)")
    }

    /// Hostile bytes straight in: never a crash, every answer an error or valid JSON.
    @Test func randomBytes() throws {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("{}[]\":,'$#.%()+ \\u0123456789abcdeftrnl-é😀\n\t".unicodeScalars)
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...60, using: &random) { text.unicodeScalars.append(random.pick(alphabet)) }
            if let template = try? Template(text) {
                #expect(Self.jsonObject(try template.render(.none, missing: .empty).text) != nil, "\(text)")
            }
        }
    }

    @Test func deepNestingIsRefusedNotRecursed() {
        let deep = String(repeating: "[", count: 200_000)
        #expect(compileError("{\"a\": \(deep)")?.code == .bodyTooLarge)
        var configuration = Template.Configuration()
        configuration.maxBodyBytes = 1 << 20
        #expect(throws: TemplateError.self) { try Template("{\"a\": \(deep)", configuration: configuration) }
        let braces = "{\"a\": \"" + String(repeating: "{", count: 10_000) + "\"}"
        #expect(compileError(braces)?.code == .invalidExpression)
    }

    static func plainValue(_ random: inout SeededGenerator) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<Int.random(in: 1...8, using: &random)).map { _ in random.pick(letters) })
    }

    static func jsonObject(_ text: String) -> NSDictionary? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? NSDictionary
    }

    /// Every string in a parsed document, names included.
    static func strings(in value: Any?) -> [String] {
        switch value {
        case let string as String: [string]
        case let array as NSArray: array.flatMap { strings(in: $0) }
        case let dictionary as NSDictionary: dictionary.flatMap { strings(in: $0.key) + strings(in: $0.value) }
        default: []
        }
    }
}
