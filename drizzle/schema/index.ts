export * from "./accounts";
export * from "./api-keys";
export * from "./jobs";
export * from "./sessions";
export * from "./usage";
export * from "./uploads";
export * from "./users";
