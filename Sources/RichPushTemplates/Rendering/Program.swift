/// What a compiled template runs per render: a flat list of instructions over one byte store
/// (the body, then each literal already JSON-escaped). Instructions hold only integers, so a
/// render walks them without reference counting, and looks each property up once per use.
struct Program: Sendable {
    enum Instruction: Sendable {
        /// Copy `code[start..<end]`: body text between expression values, or a literal.
        case copy(start: Int, end: Int)
        /// A string value's quote.
        case quote
        /// Write `references[index]` inside a string, as its function has it.
        case property(Int)
        /// A lone `"#(prop)"`: `references[index]` as a bare number when it is one, else quoted.
        case number(Int)
    }

    private(set) var code: [UInt8]
    private(set) var instructions: [Instruction] = []
    private(set) var references: [PropertyReference] = []
    /// The body offset each instruction comes from, to place an error found in the output.
    private(set) var sources: [Int] = []
    private let bodyCount: Int

    init(body: [UInt8]) {
        code = body
        bodyCount = body.count
    }

    /// Body bytes copied as they are.
    mutating func copyBody(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        emit(.copy(start: range.lowerBound, end: range.upperBound), from: range.lowerBound)
    }

    /// A string value (`source`, quotes included) replaced by its expression.
    mutating func append(_ expression: ValueExpression, replacing source: Range<Int>) {
        if expression.numberWhenNumeric, case .property(let reference)? = expression.terms.first {
            references.append(reference)
            emit(.number(references.count - 1), from: source.lowerBound)
            return
        }
        emit(.quote, from: source.lowerBound)
        for term in expression.terms {
            switch term {
            case .literal(let escaped):
                guard !escaped.isEmpty else { continue }
                code.append(contentsOf: escaped)
                emit(.copy(start: code.count - escaped.count, end: code.count), from: source.lowerBound)
            case .property(let reference):
                references.append(reference)
                emit(.property(references.count - 1), from: source.lowerBound)
            }
        }
        emit(.quote, from: source.lowerBound)
    }

    private mutating func emit(_ instruction: Instruction, from source: Int) {
        instructions.append(instruction)
        sources.append(source)
    }

    /// The size a render starts its buffer at: the body plus a little per property.
    var estimatedSize: Int { bodyCount + 32 * references.count }
}
