/**
 * Errors as values: a stable `code` that tests, metrics and the ledger store, and a message a person can act on.
 * Bad input is returned as a Fault; only bugs are thrown.
 */
export interface Fault {
  readonly code: string;
  readonly message: string;
}

export function fault(code: string, message: string): Fault {
  return { code, message };
}

/** Thrown where a Fault must cross a boundary that only knows exceptions (start-up, CLI). */
export class FaultError extends Error {
  constructor(readonly fault: Fault) {
    super(fault.message);
    this.name = fault.code;
  }
  get code(): string {
    return this.fault.code;
  }
}
