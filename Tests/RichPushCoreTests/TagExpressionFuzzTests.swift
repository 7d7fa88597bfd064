import Foundation
import RedisTestSupport
import RichPushCore
import Testing

/// Random and mutated tag expressions: the parser answers every one with an expression or a
/// `TagExpressionError`, never a crash, and what it accepts stays within its bounds.
/// `RICHPUSH_FUZZ_ITERATIONS` raises the count (scripts/fuzz.sh runs far more).
@Suite("Tag expression fuzzing")
struct TagExpressionFuzzTests {
    static var iterations: Int { ProcessInfo.processInfo.environment["RICHPUSH_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 2_000 }

    @Test func randomExpressionsParseOrAreRefused() throws {
        var random = SeededRandom(seed: 0x5EED)
        let pieces = [
            "a", "b", "sports", "username:alice", "!", "&&", "||", "(", ")", " ", "&", "|", "é", "$", "\u{0}",
            String(repeating: "x", count: 121),
        ]
        var accepted = 0
        for _ in 0..<Self.iterations {
            let length = Int.random(in: 0...40, using: &random)
            let text = (0..<length).map { _ in pieces.randomElement(using: &random)! }.joined()
            guard let expression = try? TagExpression(parsing: text) else { continue }
            accepted += 1
            #expect(expression.tags.count <= TagExpression.maxTags)
            // What was accepted prints back to an expression that parses to the same thing.
            #expect(try TagExpression(parsing: expression.description) == expression)
        }
        #expect(accepted > 0)
    }

    @Test func hugeAndDeepInputsAreRefusedQuickly() {
        var random = SeededRandom(seed: 42)
        for _ in 0..<200 {
            let unit = ["!", "(", "a||", "a&&", "!(", "(a||"].randomElement(using: &random)!
            let text = String(repeating: unit, count: Int.random(in: 70...60_000, using: &random)) + "a"
            #expect(throws: TagExpressionError.self) { try TagExpression(parsing: text) }
        }
    }
}
