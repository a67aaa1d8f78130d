import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;

/**
 * The least any JVM build wrapper must do (the benchmark's yardstick): read the port file,
 * connect, see CONNECTED, send BUILD started and see its exact receipt, run the command with
 * inherited stdio, send BUILD ok (or failed) and see its exact receipt, exit with the
 * command's status. No change detection, no VERIFY. Like the agent's own terminal wrapper, it
 * gives up after 5 s (on the connect, and on each read while awaiting a receipt).
 *
 *   java -cp <dir> MinimalClient -- <command> [args...]
 */
public final class MinimalClient {
    private static final int TIMEOUT_MS = 5000;

    public static void main(String[] args) throws Exception {
        String[] command = args.length > 0 && args[0].equals("--") ? Arrays.copyOfRange(args, 1, args.length) : args;
        int port = Integer.parseInt(Files.readString(Path.of(".reclazz", "agent.port")).trim());
        String owner = UUID.randomUUID().toString();
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", port), TIMEOUT_MS);
            socket.setSoTimeout(TIMEOUT_MS);
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            OutputStream out = socket.getOutputStream();
            String first = in.readLine();
            if (first == null || !first.contains("\"level\":\"CONNECTED\"")) fail("no CONNECTED line");
            receipt(in, out, "started", owner);
            int status = new ProcessBuilder(command).inheritIO().start().waitFor();
            receipt(in, out, status == 0 ? "ok" : "failed", owner);
            System.exit(status);
        }
    }

    private static void receipt(BufferedReader in, OutputStream out, String state, String owner) throws Exception {
        String request = UUID.randomUUID().toString();
        out.write(("BUILD " + state + " request=" + request + " owner=" + owner + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
        String ack = "\"message\":\"BUILD_ACK " + request + " " + state + " owner=" + owner + "\"";
        for (String line; (line = in.readLine()) != null; ) {
            if (line.contains(ack)) return;
            if (line.contains("BUILD_REJECTED " + request + " ")) fail("BUILD " + state + " rejected");
        }
        fail("connection closed before the BUILD " + state + " receipt");
    }

    private static void fail(String message) {
        System.err.println("MinimalClient: " + message);
        System.exit(1);
    }
}
