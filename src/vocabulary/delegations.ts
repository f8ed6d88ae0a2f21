/** The longest delegation chain a request may name (`on_behalf_of`), outermost delegator first. */
export const MAX_CHAIN = 4;
