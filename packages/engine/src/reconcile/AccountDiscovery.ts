/** The numeric id of `{ "id": 583231, ... }`, or undefined for anything else. */
export const parseUserId = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null || !("id" in body)) return undefined
  const id = body.id
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? String(id) : undefined
}

/** STS GetCallerIdentity's `Account`, only when it is a 12-digit AWS account id. */
export const parseCallerAccount = (output: { readonly Account?: string | undefined }): string | undefined =>
  output.Account !== undefined && /^\d{12}$/.test(output.Account) ? output.Account : undefined
