import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../auth/password";
import { paths } from "../paths";
import { Notice } from "./layout";

export interface CredentialsFormProps {
  formToken: string;
  email?: string;
  errors?: string[];
}

function CredentialsForm(props: CredentialsFormProps & { action: string; submit: string; newPassword: boolean }) {
  return (
    <form method="post" action={props.action} class="card narrow">
      {props.errors?.map((e) => (
        <Notice kind="error">{e}</Notice>
      ))}
      <input type="hidden" name="_csrf" value={props.formToken} />
      <label>
        Email
        <input type="email" name="email" required autocomplete="email" value={props.email ?? ""} maxlength={254} />
      </label>
      <label>
        Password
        <input
          type="password"
          name="password"
          required
          minlength={props.newPassword ? PASSWORD_MIN_LENGTH : undefined}
          maxlength={PASSWORD_MAX_LENGTH}
          autocomplete={props.newPassword ? "new-password" : "current-password"}
        />
      </label>
      <button type="submit" class="primary">
        {props.submit}
      </button>
    </form>
  );
}

export function SignInPage(props: CredentialsFormProps & { afterSignUp?: boolean }) {
  return (
    <>
      {props.afterSignUp && (
        <Notice kind="info">
          If that email was new, your account is ready: sign in with it. If it already had an account, sign in with that
          account's password.
        </Notice>
      )}
      <CredentialsForm {...props} action={paths.signIn} submit="Sign in" newPassword={false} />
      <p>
        No account yet? <a href={paths.signUp}>Sign up</a> — the free plan is ten jobs a month.
      </p>
    </>
  );
}

export function SignUpPage(props: CredentialsFormProps) {
  return (
    <>
      <CredentialsForm {...props} action={paths.signUp} submit="Create account" newPassword={true} />
      <p>
        Already have an account? <a href={paths.signIn}>Sign in</a>
      </p>
    </>
  );
}

/** The 429 page: what was refused and when to try again. */
export function ThrottledPage(props: { what: string; retryAfterSeconds: number; back: string }) {
  const minutes = Math.ceil(props.retryAfterSeconds / 60);
  return (
    <>
      <Notice kind="error">
        Too many {props.what}. Please wait and try again in {minutes} minute{minutes === 1 ? "" : "s"}.
      </Notice>
      <p>
        <a href={props.back}>Back</a>
      </p>
    </>
  );
}
