/** The one error a condition raises, whether it does not compile or fails while evaluating. */
export class ConditionError extends Error {
  /** 1-based column in the source where the problem was found, when it is a syntax problem. */
  readonly position: number | undefined;
  constructor(message: string, position?: number) {
    super(message);
    this.name = 'ConditionError';
    this.position = position;
  }
}

/** Rejects a condition at compile time ("Invalid Condition: …"), at the 0-based `index` in the source when given. */
export function invalidCondition(message: string, index?: number): never {
  throw new ConditionError(`Invalid Condition: ${message}${index === undefined ? '' : ` at ${index + 1}`}`, index === undefined ? undefined : index + 1);
}

/** Fails an evaluation the way Python would raise (TypeError, ZeroDivisionError, …); the condition then reads false. */
export function evaluationFailed(message: string): never {
  throw new ConditionError(message);
}
