import RichPushCore
import Testing

@Suite("Tag expressions")
struct TagExpressionTests {
    @Test(arguments: [
        ("username:alice", ["username:alice"], true),
        ("a && b", ["a"], false),
        ("a && b", ["a", "b"], true),
        ("a || b && c", ["a"], true),
        ("(a || b) && c", ["a"], false),
        ("!a", ["b"], true),
        ("sports && !weekend", ["sports", "weekend"], false),
        ("sports && !weekend", ["sports"], true),
        ("!(a || b)", [], true),
        ("*", [], true),
        (" * ", ["a"], true),
    ])
    func matches(expression: String, tags: [String], expected: Bool) throws {
        #expect(try TagExpression(parsing: expression).matches(Set(tags)) == expected)
    }

    @Test(arguments: [
        ("", "empty"),
        ("a &&", "ends where a tag was expected"),
        ("a & b", "must be doubled"),
        ("(a || b", "missing ')'"),
        ("a b", "unexpected 'b'"),
        ("a $ b", "unexpected character '$'"),
        ("* || a", "stands alone"),
        ("!*", "stands alone"),
        ((0...20).map { "t\($0)" }.joined(separator: " || "), "at most 20"),
        // Hostile inputs that once overflowed the stack: refused by their bounds before any recursion.
        (String(repeating: "!", count: 100_000) + "x", "bytes"),
        (String(repeating: "a||", count: 50_000) + "a", "bytes"),
        (String(repeating: "a&&", count: 65) + "a", "operators"),
        (String(repeating: "!", count: 17) + "x", "nest deeper"),
        (String(repeating: "(", count: 17) + "a" + String(repeating: ")", count: 17), "nest deeper"),
        (String(repeating: "(!", count: 9) + "a" + String(repeating: ")", count: 9), "nest deeper"),
    ])
    func refusals(expression: String, words: String) {
        #expect {
            _ = try TagExpression(parsing: expression)
        } throws: { error in
            (error as? TagExpressionError)?.message.contains(words) == true
        }
    }

    @Test func expressionsAtTheBoundsParse() throws {
        let chain = try TagExpression(parsing: String(repeating: "a||", count: 64) + "a")
        #expect(chain.tags == ["a"])
        #expect(chain.matches(["a"]))
        let nested = try TagExpression(parsing: String(repeating: "!", count: 16) + "x")
        #expect(nested.matches(["x"]))
    }

    @Test func candidateTagsBoundTheFanOut() throws {
        #expect(try TagExpression(parsing: "a || b").candidateTags == ["a", "b"])
        #expect(try TagExpression(parsing: "a && (b || c)").candidateTags == ["a"])
        #expect(try TagExpression(parsing: "!a").candidateTags == nil)
        #expect(try TagExpression(parsing: "a && !b").candidateTags == ["a"])
    }

    @Test func userNamesAreChecked() {
        #expect(User.validate(name: "alice.smith@example") == nil)
        #expect(User.validate(name: "") != nil)
        #expect(User.validate(name: "bad name") != nil)
    }
}
