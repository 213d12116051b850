export * from "./accounts";
export * from "./api-keys";
export * from "./jobs";
export * from "./usage";
